/**
 * A typed client for the REST API of `hebbs serve`. Requests take camelCase fields (as in the recall
 * documentation: `scoringWeights: {wRelevance, wRecency, wImportance, wReinforcement}`); the wire is
 * snake_case, and the request types are generated from the server's OpenAPI schema (src/schema.ts).
 */

import { Camelize, fromWire, toWire } from "./case.js";
import type { components } from "./schema.js";
import { openSubscription, Subscription } from "./subscription.js";

type Schemas = components["schemas"];

export type RememberOptions = Camelize<Schemas["MemoryBody"]>;
export type RecallOptions = Camelize<Schemas["RecallBody"]>;
export type PrimeOptions = Camelize<Schemas["PrimeBody"]>;
export type ReviseOptions = Camelize<Schemas["ReviseBody"]>;
export type ForgetOptions = Camelize<Schemas["ForgetBody"]>;
export type ReflectOptions = Camelize<Schemas["ReflectBody"]>;
export type SubscribeOptions = Camelize<Schemas["SubscribeBody"]>;

export interface InsightsOptions {
  entityId?: string;
  minConfidence?: number;
  maxResults?: number;
}

export type Strategy = "similarity" | "temporal" | "causal" | "analogical";

export interface ScoringWeights {
  wRelevance: number;
  wRecency: number;
  wImportance: number;
  wReinforcement: number;
}

export interface Memory {
  id: string;
  content: string;
  importance: number;
  context: Record<string, unknown>;
  entityId: string | null;
  kind: string;
  createdAt: string;
  updatedAt: string;
  lastAccessedAt: string | null;
  accessCount: number;
  /** HEBBS' decay score under the server's policy when the memory was read. */
  decayScore: number | null;
}

/** An insight is a memory of kind `insight` citing its sources; `stale` once a source was forgotten or revised. */
export interface Insight extends Memory {
  confidence: number;
  sourceMemoryIds: string[];
  stale: boolean;
}

export interface ReflectOutput {
  insightsCreated: number;
  clustersFound: number;
  clustersProcessed: number;
  memoriesProcessed: number;
  unchanged: number;
  insights: Insight[];
}

export interface StrategyDetail {
  strategy: Strategy | string;
  relevance?: number;
  [detail: string]: unknown;
}

export interface RecallResult {
  memory: Memory;
  score: number;
  signals: { relevance: number; recency: number; importance: number; reinforcement: number };
  strategyDetails: StrategyDetail[];
}

export interface RecallOutput {
  results: RecallResult[];
  count: number;
  [more: string]: unknown;
}

export interface ForgetOutput {
  forgotten: string[];
  forgottenCount: number;
  cascadeCount: number;
  [more: string]: unknown;
}

export interface Health {
  status: string;
  version: string;
  memories: number;
  uptimeSeconds: number;
  [more: string]: unknown;
}

export interface ClientOptions {
  /** The REST address, e.g. http://127.0.0.1:6381 */
  baseUrl?: string;
  /** An API key (`hebbs keys create`); defaults to the HEBBS_API_KEY environment variable. */
  apiKey?: string;
  /** Whose memories (sent as X-Hebbs-Tenant); left out: the key's own tenant. An admin key may name any. */
  tenant?: string;
  /** Milliseconds before a request is abandoned (default 30 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** A request the server refused (4xx) or could not serve (5xx): the server's reason, and the status. */
export class HebbsError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "HebbsError";
  }
}

export class HebbsClient {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly tenant: string | undefined;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:6381").replace(/\/+$/, "");
    this.apiKey = options.apiKey ?? process.env.HEBBS_API_KEY;
    this.tenant = options.tenant;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** Store one memory; `context` is kept as given. */
  async remember(options: RememberOptions): Promise<Memory> {
    return (await this.request("POST", "/v1/memories", options)) as Memory;
  }

  async get(memoryId: string): Promise<Memory> {
    return (await this.request("GET", `/v1/memories/${encodeURIComponent(memoryId)}`)) as Memory;
  }

  /** Recall memories for a cue; without `strategies`, the server's default recall. */
  async recall(options: RecallOptions): Promise<RecallOutput> {
    return (await this.request("POST", "/v1/recall", options)) as RecallOutput;
  }

  /** An entity's memories ranked by an optional cue: context to prime an agent with. */
  async prime(options: PrimeOptions): Promise<RecallOutput> {
    return (await this.request("POST", "/v1/prime", options)) as RecallOutput;
  }

  /** Change a memory in place; the server keeps the old state as a linked revision. */
  async revise(memoryId: string, options: ReviseOptions): Promise<Memory> {
    return (await this.request("PUT", `/v1/memories/${encodeURIComponent(memoryId)}`, options)) as Memory;
  }

  /** Forget memories by id, or every memory of an entity. */
  async forget(options: ForgetOptions): Promise<ForgetOutput> {
    return (await this.request("POST", "/v1/forget", options)) as ForgetOutput;
  }

  /** Cluster the memories (of an entity, since a time) and store one insight per cluster of at least 3. */
  async reflect(options: ReflectOptions = {}): Promise<ReflectOutput> {
    return (await this.request("POST", "/v1/reflect", options)) as ReflectOutput;
  }

  /** The top insights by confidence across the store. */
  async insights(options: InsightsOptions = {}): Promise<Insight[]> {
    const query = new URLSearchParams();
    if (options.entityId !== undefined) query.set("entity_id", options.entityId);
    if (options.minConfidence !== undefined) query.set("min_confidence", String(options.minConfidence));
    if (options.maxResults !== undefined) query.set("max_results", String(options.maxResults));
    const suffix = query.size ? `?${query}` : "";
    return ((await this.request("GET", `/v1/insights${suffix}`)) as { insights: Insight[] }).insights;
  }

  /**
   * Open a subscription: feed it text as it arrives (`feed`) and read the memories that surface (`next`, or
   * `for await`), each once, with the strategy details that made it surface. Close it when done.
   */
  async subscribe(options: SubscribeOptions = {}): Promise<Subscription> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), this.timeoutMs);
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}/v1/subscribe`, {
        method: "POST",
        headers: { ...this.headers(), Accept: "text/event-stream", "Content-Type": "application/json" },
        body: JSON.stringify(toWire(options)),
        signal: abort.signal,
      });
    } catch (error) {
      throw new HebbsError(0, `could not reach ${this.baseUrl}: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) {
      const text = await response.text();
      let reason: unknown;
      try {
        reason = (JSON.parse(text) as { error?: unknown }).error;
      } catch {
        reason = undefined;
      }
      throw new HebbsError(response.status, typeof reason === "string" ? reason : `${response.status} ${text.slice(0, 200)}`);
    }
    return openSubscription(response, abort, (method, path, body) => this.request(method, path, body));
  }

  async health(): Promise<Health> {
    return (await this.request("GET", "/v1/system/health")) as Health;
  }

  private headers(): Record<string, string> {
    return {
      ...(this.apiKey ? { Authorization: `Bearer ${this.apiKey}` } : {}),
      ...(this.tenant ? { "X-Hebbs-Tenant": this.tenant } : {}),
    };
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { ...this.headers(), Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await this.fetchImpl(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(toWire(body)),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new HebbsError(0, `could not reach ${this.baseUrl}: ${(error as Error).message}`);
    }
    const text = await response.text();
    let payload: unknown = undefined;
    try {
      payload = text ? JSON.parse(text) : undefined;
    } catch {
      payload = undefined;
    }
    if (!response.ok) {
      const reason = (payload as { error?: unknown } | undefined)?.error;
      throw new HebbsError(response.status, typeof reason === "string" ? reason : `${response.status} ${text.slice(0, 200)}`);
    }
    return fromWire(payload);
  }
}
