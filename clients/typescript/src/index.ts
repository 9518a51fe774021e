/**
 * mnemo-client: the TypeScript client for mnemo (memory service for chatbots). Memory API, sessions
 * and chat with streaming, over `fetch` only, for browsers and Node 20+.
 */
export { MnemoClient } from "./client.js";
export type {
  ChatMessage,
  ChatOptions,
  ForgetCriteria,
  ListOptions,
  Message,
  MnemoClientOptions,
  SearchOptions,
  Timestamp,
} from "./client.js";
export * from "./errors.js";
export { checkId, isValidId, ID_RULE, segment } from "./ids.js";
export type * from "./types.js";
