import { render } from "preact";
import { App } from "./app.js";

const root = document.getElementById("app")!;
// The shell's "Loading…" line is not Preact's: clear it rather than let render() diff against it.
root.textContent = "";
render(<App />, root);
