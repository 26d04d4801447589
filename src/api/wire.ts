// The wire format the client speaks: src/protocol/wire.ts, where the client, the emulator
// and the lockfile's records share it. Re-exported here for the client's users.

export * from "../protocol/wire.js";
