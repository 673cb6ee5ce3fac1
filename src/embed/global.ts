// The entry point of {app_url}/embed/v1.js: the host script as the global `AiAgent`.
import { mount, version } from "./mount.js";

(globalThis as unknown as { AiAgent: unknown }).AiAgent = Object.freeze({ mount, version });
