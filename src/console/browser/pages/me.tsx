import { useContext, useState } from "preact/hooks";
import { alertSettings, unlockSound } from "../alerts.js";
import { accounts } from "../api.js";
import { SessionContext } from "../session.js";
import { ErrorNote, useAction } from "../ui.js";

/** The most bytes a picture may have (the service refuses more, naming image). */
export const MAX_PICTURE = 45 * 1024;

/** The picture customers see beside this person's name: uploaded here, served by the service. */
export function YourPicture() {
  const s = useContext(SessionContext)!;
  const a = useAction();
  const url = s.account.callerPictureUrl;
  const upload = (file: File | undefined) => {
    if (!file) return;
    void a.run(async () => {
      if (file.size > MAX_PICTURE)
        throw new Error(`The picture must be at most 45 KiB (this one is ${file.size} bytes).`);
      const r = await accounts.setMyPicture({ image: new Uint8Array(await file.arrayBuffer()) });
      if (r.data) s.update(r.data);
    });
  };
  return (
    <div class="card">
      <h2>Your picture in the chat</h2>
      <p class="muted">A PNG, JPEG or WebP image of at most 45 KiB; customers see it beside your name.</p>
      <div class="picture-row">
        {url ? (
          <img
            class="picture"
            src={url}
            alt={`${s.account.callerDisplayName || s.account.callerEmail}, as customers see you`}
            width={64}
            height={64}
            data-testid="my-picture"
          />
        ) : (
          <span class="picture picture--none" aria-hidden="true">
            {[...(s.account.callerDisplayName || s.account.callerEmail)][0]?.toUpperCase()}
          </span>
        )}
        <input
          id="picture-file"
          class="sr-only"
          type="file"
          accept="image/png,image/jpeg,image/webp"
          onChange={(e) => upload(e.currentTarget.files?.[0])}
        />
        <label class="button" for="picture-file">
          Choose a picture…
        </label>
        {url && (
          <button
            type="button"
            class="button button--quiet"
            disabled={a.busy}
            onClick={() =>
              void a.run(async () => {
                const r = await accounts.setMyPicture({ image: new Uint8Array() });
                if (r.data) s.update(r.data);
              })
            }
          >
            Remove picture
          </button>
        )}
      </div>
      {a.error !== undefined && <ErrorNote error={a.error} />}
    </div>
  );
}

/** Desktop notifications and a sound for new customer messages: off until the person turns them on. */
export function AlertSettings() {
  const [desktop, setDesktop] = useState(alertSettings.desktop);
  const [sound, setSound] = useState(alertSettings.sound);
  const [note, setNote] = useState("");
  const blocked = typeof Notification === "undefined" || Notification.permission === "denied";
  const toggleDesktop = async (on: boolean) => {
    setNote("");
    // Asked here, from the click: browsers ask for the permission only from a user gesture.
    if (on && typeof Notification !== "undefined" && Notification.permission !== "granted") {
      if ((await Notification.requestPermission()) !== "granted") {
        setNote("The browser did not allow notifications: allow them in its site settings, then try again.");
        on = false;
      }
    }
    alertSettings.desktop = on;
    setDesktop(on);
  };
  return (
    <div class="card">
      <h2>New messages</h2>
      <p class="muted">
        For a new customer message in a conversation you hold or nobody holds, while the inbox is open. The tab's title
        counts them until the conversation is read.
      </p>
      <div class="field field--check">
        <input
          id="alert-desktop"
          type="checkbox"
          checked={desktop}
          disabled={blocked && !desktop}
          onChange={(e) => void toggleDesktop(e.currentTarget.checked)}
        />
        <label for="alert-desktop">Desktop notifications{blocked ? " (blocked by the browser)" : ""}</label>
      </div>
      <div class="field field--check">
        <input
          id="alert-sound"
          type="checkbox"
          checked={sound}
          onChange={(e) => {
            const on = e.currentTarget.checked;
            if (on) unlockSound();
            alertSettings.sound = on;
            setSound(on);
          }}
        />
        <label for="alert-sound">A short sound</label>
      </div>
      {note && (
        <p class="state state--error" role="alert">
          {note}
        </p>
      )}
    </div>
  );
}
