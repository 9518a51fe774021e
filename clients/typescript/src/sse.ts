/** Server-sent events from a fetch body: the `data` of each event (comments such as pings skipped). */

export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  function* lines(final: boolean): Generator<string> {
    // a "\r" at the end may be the first half of "\r\n": hold it back for the next read
    const held = !final && buffer.endsWith("\r") ? "\r" : "";
    const parts = buffer.slice(0, buffer.length - held.length).split(/\r\n|\r|\n/);
    buffer = final ? "" : (parts.pop() ?? "") + held;
    yield* parts;
  }
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value !== undefined) buffer += decoder.decode(value, { stream: true });
      if (done) buffer += decoder.decode();
      for (const line of lines(done)) {
        if (line === "") {
          if (data.length > 0) yield data.join("\n");
          data = [];
        } else if (line.startsWith("data:")) {
          data.push(line.slice(5).replace(/^ /, ""));
        }
      }
      if (done) break;
    }
    if (data.length > 0) yield data.join("\n");
  } finally {
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
