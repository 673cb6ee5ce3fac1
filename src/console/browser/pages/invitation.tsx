import { useState } from "preact/hooks";
import { accounts, signIn } from "../api.js";
import { ErrorNote, PageTitle, TextField, useAction } from "../ui.js";
import { SignIn } from "./sign-in.js";

/**
 * The invitation link's page: the code is in the address's fragment (never sent to a server), the person sets a
 * password and is signed in with it at once (the sign-in form shows only if that fails).
 */
export function AcceptInvitation({ onSignedIn }: { onSignedIn: () => void }) {
  const code = new URLSearchParams(location.hash.slice(1)).get("code") ?? "";
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [joined, setJoined] = useState<string | undefined>();
  const a = useAction();
  if (joined !== undefined) return <SignIn email={joined} onSignedIn={onSignedIn} />;
  const submit = (e: Event) => {
    e.preventDefault();
    void a.run(async () => {
      if (password !== again) throw new Error("The two passwords differ.");
      const r = await accounts.acceptInvitation({ invitationCode: code, password });
      history.replaceState(null, "", "/console/");
      const email = r.data?.email ?? "";
      try {
        await signIn(email, password);
      } catch {
        setJoined(email);
        return;
      }
      onSignedIn();
    });
  };
  return (
    <main class="center">
      <form class="card card--narrow" onSubmit={submit}>
        <PageTitle>Join the team</PageTitle>
        {code ? (
          <p>Choose the password you will sign in with. The invitation works once.</p>
        ) : (
          <p class="state state--error" role="alert">
            This link has no invitation code. Open the whole link from the invitation.
          </p>
        )}
        <TextField
          label="New password"
          id="new-password"
          hint="At least 8 characters."
          type="password"
          autocomplete="new-password"
          minLength={8}
          required
          value={password}
          onValue={setPassword}
        />
        <TextField
          label="The same password again"
          id="again-password"
          type="password"
          autocomplete="new-password"
          required
          value={again}
          onValue={setAgain}
        />
        {a.error !== undefined && <ErrorNote error={a.error} />}
        <button type="submit" class="button button--primary" disabled={a.busy || !code}>
          Accept the invitation
        </button>
      </form>
    </main>
  );
}
