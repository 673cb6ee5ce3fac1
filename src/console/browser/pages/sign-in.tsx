import { useState } from "preact/hooks";
import { signIn } from "../api.js";
import { ErrorNote, PageTitle, TextField, useAction } from "../ui.js";

/** Sign in with e-mail and password; the session is an HttpOnly cookie the service sets. */
export function SignIn({ onSignedIn, email: initial = "" }: { onSignedIn: () => void; email?: string }) {
  const [email, setEmail] = useState(initial);
  const [password, setPassword] = useState("");
  const a = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      await signIn(email, password);
      onSignedIn();
    });
  };
  return (
    <main class="center">
      <form class="card card--narrow" onSubmit={submit} aria-labelledby="sign-in-title">
        <PageTitle>
          <span id="sign-in-title">Sign in to the console</span>
        </PageTitle>
        <TextField
          label="E-mail"
          id="email"
          type="email"
          autocomplete="username"
          required
          value={email}
          onValue={setEmail}
        />
        <TextField
          label="Password"
          id="password"
          type="password"
          autocomplete="current-password"
          required
          value={password}
          onValue={setPassword}
        />
        {a.error !== undefined && <ErrorNote error={a.error} />}
        <button type="submit" class="button button--primary" disabled={a.busy}>
          {a.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
