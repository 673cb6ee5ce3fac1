import { hostileRpcSuite } from "./hostile-rpc.js";

// Hostile messages on every RPC over Connect JSON (see hostile-rpc.ts; hostile-rpc-binary.test.ts runs beside this file).
hostileRpcSuite("Connect JSON", false);
