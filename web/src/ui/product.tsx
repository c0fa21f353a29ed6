/** The product's name and what it does, in one line: the first thing Sign in and Create your account say. */
export function Product() {
  return (
    <p class="product">
      <strong>Burnrate</strong> — spend per API key for OpenAI, Anthropic and more, to the micro-dollar.
    </p>
  );
}
