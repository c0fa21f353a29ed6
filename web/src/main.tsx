import { render } from 'preact';
import { joinSession } from './api/session.ts';
import { App } from './app.tsx';
import './ui/styles.css';

// A tab opened without a session first asks the browser's open tabs for theirs (api/session.ts), so a new tab or a
// pasted link of a signed-in browser opens signed in instead of on "Sign in".
void joinSession().then(() => render(<App />, document.getElementById('app')!));
