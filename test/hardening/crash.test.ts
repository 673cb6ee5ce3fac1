import { crashCase } from "./crash-case.js";

// Kill-and-restart rounds, the first half (crash-more.test.ts runs the second, in parallel): see crash-case.ts.
crashCase();
