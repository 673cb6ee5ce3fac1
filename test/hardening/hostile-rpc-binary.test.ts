import { hostileRpcSuite } from "./hostile-rpc.js";

// Hostile messages on every RPC over Connect binary (see hostile-rpc.ts; hostile-rpc-json.test.ts runs beside this file).
hostileRpcSuite("Connect binary", true);
