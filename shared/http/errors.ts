/**
 * Typed errors. Domain code throws these; the HTTP layer maps them ONCE to RFC 9457 problem details.
 * A 4xx's title/detail is shown to the client; anything else becomes a generic 500.
 */
export interface FieldError {
  path: string;
  message: string;
}

export class HttpError extends Error {
  constructor(
    readonly status: number,
    /** `type` becomes `/problems/<slug>`. */
    readonly slug: string,
    readonly title: string,
    readonly detail?: string,
    readonly errors?: FieldError[],
    /** Extra response headers (e.g. Retry-After). */
    readonly headers?: Record<string, string>,
  ) {
    super(detail ?? title);
    this.name = new.target.name;
  }
}

export class ValidationError extends HttpError {
  constructor(detail: string, errors?: FieldError[]) {
    super(400, 'validation-error', 'Your request is not valid.', detail, errors);
  }
}

/** A stop budget whose target offers no usable lever (docs/features/budgets-and-alerts.md): 400 `no-lever` naming why. */
export class NoLever extends HttpError {
  constructor(detail: string) {
    super(400, 'no-lever', 'Nothing can stop this spend.', detail, [{ path: 'action', message: detail }]);
  }
}

/** A link token (verify e-mail, reset password, invitation) that is unknown, used, revoked or expired. */
export class InvalidToken extends HttpError {
  constructor(detail: string) {
    super(400, 'invalid-token', 'The link is not valid.', detail, [{ path: 'token', message: detail }]);
  }
}

export class MalformedRequest extends HttpError {
  constructor(detail: string) {
    super(400, 'malformed-request', 'The request body could not be read.', detail);
  }
}

export class Unauthorized extends HttpError {
  /** `scheme` names the credential in `WWW-Authenticate`: `Bearer` for user tokens, `ApiKey` for ingest keys. */
  constructor(detail = 'A valid bearer token is required.', scheme = 'Bearer') {
    super(401, 'unauthorized', 'Unauthorized.', detail, undefined, { 'www-authenticate': scheme });
  }
}

export class Forbidden extends HttpError {
  constructor(detail = 'Your role does not allow this.') {
    super(403, 'forbidden', 'Forbidden.', detail);
  }
}

export class NotFound extends HttpError {
  constructor(detail = 'The resource does not exist.') {
    super(404, 'not-found', 'Not found.', detail);
  }
}

export class Conflict extends HttpError {
  constructor(detail: string, slug = 'conflict') {
    super(409, slug, 'Conflict.', detail);
  }
}

export class PayloadTooLarge extends HttpError {
  constructor(limitBytes: number) {
    super(413, 'payload-too-large', 'The request body is too large.', `The body must be at most ${limitBytes} bytes.`);
  }
}

/** A body that is not `application/json` (or a `+json` type): the API reads JSON only. */
export class UnsupportedMediaType extends HttpError {
  constructor(contentType: string | undefined) {
    super(
      415,
      'unsupported-media-type',
      'The body must be JSON.',
      contentType ? `Content-Type ${contentType.slice(0, 100)} is not JSON: send application/json.` : 'The body has no Content-Type: send application/json.',
    );
  }
}

export class TooManyRequests extends HttpError {
  constructor(detail: string, slug = 'too-many-requests', retryAfterSeconds?: number) {
    super(
      429,
      slug,
      'Too many requests.',
      detail,
      undefined,
      retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
    );
  }
}

/** A feature this deployment runs without (`-c billing=off`): the route exists, the service behind it does not. */
export class FeatureOff extends HttpError {
  constructor(feature: string, detail: string) {
    super(503, `${feature}-off`, `${feature.charAt(0).toUpperCase()}${feature.slice(1)} is off.`, detail);
  }
}
