import { useState } from "preact/hooks";
import { signIn } from "../api.js";
import { ErrorNote, Field, PageTitle, useAction } from "../ui.js";

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
        <Field label="E-mail" id="email">
          <input
            id="email"
            type="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </Field>
        <Field label="Password" id="password">
          <input
            id="password"
            type="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        {a.error !== undefined && <ErrorNote error={a.error} />}
        <button type="submit" class="button button--primary" disabled={a.busy}>
          {a.busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
