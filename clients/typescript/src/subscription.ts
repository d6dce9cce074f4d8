/**
 * A subscription over Server-Sent Events (`POST /v1/subscribe`): feed text as it arrives, read the memories that
 * surface (each once, with the strategy details that made it surface), close it. Pushes arrive in camelCase.
 */

import { fromWire } from "./case.js";
import type { Memory, StrategyDetail } from "./client.js";

export interface SubscribePush {
  subscriptionId: number;
  sequenceNumber: number;
  confidence: number;
  memory: Memory;
  score: number;
  strategyDetails: StrategyDetail[];
  pushTimestampUs: number;
}

interface ServerEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Splits a Server-Sent Events byte stream into events (comment lines, the keep-alives, are skipped). */
async function* events(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const bytes of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) event = line.slice(7);
        else if (line.startsWith("data: ")) data.push(line.slice(6));
      }
      if (data.length) yield { event, data: fromWire(JSON.parse(data.join("\n"))) as Record<string, unknown> };
    }
  }
}

export class Subscription implements AsyncIterable<SubscribePush> {
  /** Pushes the server dropped because this reader was too slow (its running count). */
  dropped = 0;
  closed = false;
  private readonly pushes: SubscribePush[] = [];
  private waiting: (() => void) | undefined;

  constructor(
    readonly id: number,
    private readonly stream: AsyncGenerator<ServerEvent>,
    private readonly abort: AbortController,
    private readonly send: (method: string, path: string, body?: unknown) => Promise<unknown>,
  ) {
    void this.pump();
  }

  /** Text as it arrives; a chunk it completes (sentence end, word count) is recalled before this resolves. */
  async feed(text: string): Promise<void> {
    await this.send("POST", `/v1/subscribe/${this.id}/feed`, { text });
  }

  /** The next push, or undefined once the subscription ended or `timeoutMs` passed without one. */
  async next(timeoutMs = 30_000): Promise<SubscribePush | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (!this.pushes.length && !this.closed && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    return this.pushes.shift();
  }

  /** Close it on the server and stop reading (pushes already received stay readable). */
  async close(): Promise<void> {
    if (!this.closed) {
      try {
        await this.send("DELETE", `/v1/subscribe/${this.id}`);
      } catch {
        // closed already (idle timeout, server shutdown): nothing left to free
      }
    }
    this.finish();
    this.abort.abort();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SubscribePush> {
    for (;;) {
      const push = await this.next(Number.MAX_SAFE_INTEGER);
      if (push === undefined) return;
      yield push;
    }
  }

  private async pump(): Promise<void> {
    try {
      for await (const { event, data } of this.stream) {
        if (event === "push") this.pushes.push(data as unknown as SubscribePush);
        if (event === "dropped" || event === "closed") this.dropped = Number(data.dropped ?? this.dropped);
        if (event === "closed") break;
        this.waiting?.();
      }
    } catch {
      // the stream was aborted (close) or the connection dropped: the subscription is over either way
    }
    this.finish();
  }

  private finish(): void {
    this.closed = true;
    this.waiting?.();
  }
}

/** Opens the stream and waits for its `subscribed` event (the id); a refused subscription throws before that. */
export async function openSubscription(
  response: Response,
  abort: AbortController,
  send: (method: string, path: string, body?: unknown) => Promise<unknown>,
): Promise<Subscription> {
  if (!response.body) throw new Error("the subscribe response has no body");
  const stream = events(response.body);
  const first = await stream.next();
  if (first.done || first.value.event !== "subscribed") throw new Error("the server did not confirm the subscription");
  return new Subscription(Number(first.value.data.subscriptionId), stream, abort, send);
}
