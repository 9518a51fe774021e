/**
 * mnemo's id rule, checked before any URL is built: 1-128 characters of [A-Za-z0-9_.@:|+-], not only
 * dots. Each path segment is percent-encoded (encodeURIComponent) and "." becomes "%2E", so no URL
 * normaliser (fetch, a browser, a proxy) can read a segment as a "." or ".." step.
 */
import { InvalidIdError } from "./errors.js";

export const ID_RULE = "1-128 characters of [A-Za-z0-9_.@:|+-], not only dots";
const ID_RE = /^[A-Za-z0-9_.@:|+-]{1,128}$/;

export function isValidId(value: unknown): value is string {
  return typeof value === "string" && ID_RE.test(value) && !/^\.+$/.test(value);
}

export function checkId(value: unknown, what = "id"): string {
  if (!isValidId(value)) {
    throw new InvalidIdError(`${what} must be ${ID_RULE}, got ${JSON.stringify(value)}`);
  }
  return value;
}

/** One checked id as one encoded path segment. */
export function segment(value: unknown, what = "id"): string {
  return encodeURIComponent(checkId(value, what)).replaceAll(".", "%2E");
}
