import { crashCase } from "./crash-case.js";

// Kill-and-restart rounds, the second half (crash.test.ts runs the first, in parallel): see crash-case.ts.
crashCase();
