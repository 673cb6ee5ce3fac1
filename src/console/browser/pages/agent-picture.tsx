import { accounts } from "../api.js";
import { ErrorNote, useAction } from "../ui.js";
import { MAX_PICTURE } from "./me.js";

/** The chatbot's agent picture: uploaded (or removed) at once, served by the service; the preview follows it. */
export function AgentPicture(props: { chatbotId: string; url: string; name: string; onUrl: (url: string) => void }) {
  const a = useAction();
  const set = (image: Uint8Array) =>
    void a.run(async () => {
      const r = await accounts.setChatbotPicture({ chatbotId: props.chatbotId, image });
      props.onUrl(r.data?.pictureUrl ?? "");
    });
  const upload = (file: File | undefined) => {
    if (!file) return;
    if (file.size > MAX_PICTURE) {
      void a.run(async () => {
        throw new Error(`The picture must be at most 45 KiB (this one is ${file.size} bytes).`);
      });
      return;
    }
    void file.arrayBuffer().then((b) => set(new Uint8Array(b)));
  };
  return (
    <fieldset class="hours">
      <legend>Agent picture</legend>
      <p class="muted" id="agent-picture-hint">
        A PNG, JPEG or WebP image of at most 45 KiB, shown in the chat's header and beside the agent's messages. Saved
        as soon as you choose it.
      </p>
      <div class="picture-row">
        {props.url ? (
          <img class="picture" src={props.url} alt={props.name} width={64} height={64} data-testid="agent-picture" />
        ) : (
          <span class="picture picture--none" aria-hidden="true">
            {[...props.name.trim()][0]?.toUpperCase() ?? "?"}
          </span>
        )}
        <input
          id="agent-picture-file"
          class="sr-only"
          type="file"
          accept="image/png,image/jpeg,image/webp"
          aria-describedby="agent-picture-hint"
          onChange={(e) => {
            upload(e.currentTarget.files?.[0]);
            e.currentTarget.value = "";
          }}
        />
        <label class="button" for="agent-picture-file">
          Choose a picture…
        </label>
        {props.url && (
          <button type="button" class="button button--quiet" disabled={a.busy} onClick={() => set(new Uint8Array())}>
            Remove picture
          </button>
        )}
      </div>
      {a.error !== undefined && <ErrorNote error={a.error} />}
    </fieldset>
  );
}
