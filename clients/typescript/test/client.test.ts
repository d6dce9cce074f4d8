/** The TypeScript client against a real `hebbs serve`: every method, camelCase in and out, errors. */

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { HebbsClient, HebbsError } from "../src/index.js";
import { serve, type Served } from "./server.js";

let served: Served;
let client: HebbsClient;
const entity = `ts-${Date.now()}`;

before(async () => {
  served = await serve();
  client = new HebbsClient({ baseUrl: served.url, apiKey: served.apiKey });
});

after(async () => {
  await served?.stop();
});

describe("HebbsClient", () => {
  it("remembers and gets a memory, context kept as given", async () => {
    const memory = await client.remember({
      content: "The staging database ran out of disk.",
      entityId: entity,
      importance: 0.7,
      context: { ticket_id: "OPS-12", nested: { keep_me: 1 } },
    });
    assert.equal(memory.entityId, entity);
    assert.equal(memory.importance, 0.7);
    assert.deepEqual(memory.context, { ticket_id: "OPS-12", nested: { keep_me: 1 } });
    const again = await client.get(memory.id);
    assert.equal(again.content, "The staging database ran out of disk.");
    assert.equal(again.accessCount, 0);
  });

  it("recalls as the recall documentation writes it, with camelCase weights and strategy details", async () => {
    await client.remember({ content: "Deploys to staging failed because the disk was full.", entityId: entity });
    await client.remember({ content: "The marketing team booked a venue for the offsite.", entityId: entity });
    const { results } = await client.recall({
      cue: "staging disk full",
      strategies: ["similarity"],
      topK: 2,
      scoringWeights: { wRelevance: 1, wRecency: 0, wImportance: 0, wReinforcement: 0 },
    });
    assert.equal(results.length, 2);
    assert.match(results[0].memory.content, /disk/);
    assert.ok(results[0].score >= results[1].score);
    assert.equal(results[0].score, results[0].signals.relevance); // relevance-only weights
    assert.equal(results[0].strategyDetails[0].strategy, "similarity");
    assert.equal(typeof results[0].strategyDetails[0].distance, "number");
    const recalled = await client.get(results[0].memory.id);
    assert.equal(recalled.accessCount, 1); // a recall counts
  });

  it("primes an entity and revises a memory, keeping the old state as a revision", async () => {
    const primed = await client.prime({ entityId: entity, cue: "disk", topK: 5 });
    assert.ok(primed.results.length >= 3);
    assert.ok(primed.results.every((r) => r.memory.entityId === entity));
    const target = primed.results[0].memory;
    const revised = await client.revise(target.id, { content: `${target.content} (resolved)`, importance: 0.9 });
    assert.equal(revised.id, target.id);
    assert.match(revised.content, /resolved/);
    assert.equal(revised.importance, 0.9);
  });

  it("forgets by id and by entity", async () => {
    const memory = await client.remember({ content: "A memory to forget.", entityId: `${entity}-gone` });
    const byId = await client.forget({ memoryIds: [memory.id] });
    assert.equal(byId.forgottenCount, 1);
    await assert.rejects(client.get(memory.id), (error: unknown) => error instanceof HebbsError && error.status === 404);
    await client.remember({ content: "Another one.", entityId: `${entity}-gone` });
    const byEntity = await client.forget({ entityId: `${entity}-gone` });
    assert.equal(byEntity.forgottenCount, 1);
  });

  it("reflects on an entity's memories and lists its insights with their sources", async () => {
    const topic = `${entity}-garden`;
    const made = [];
    for (const content of [
      "The tomatoes in the garden need watering every evening in July.",
      "Aphids are eating the roses; spray them with soapy water.",
      "We planted basil and parsley beside the tomato beds.",
    ]) {
      made.push((await client.remember({ content, entityId: topic })).id);
    }
    const done = await client.reflect({ entityId: topic });
    assert.equal(done.insightsCreated, 1);
    assert.equal(done.memoriesProcessed, 3);
    const again = await client.reflect({ entityId: topic });
    assert.equal(again.insightsCreated, 0); // the same sources: no duplicate
    const [insight, ...rest] = await client.insights({ entityId: topic, minConfidence: 0, maxResults: 5 });
    assert.equal(rest.length, 0);
    assert.equal(insight.kind, "insight");
    assert.deepEqual([...insight.sourceMemoryIds].sort(), [...made].sort());
    assert.equal(insight.stale, false);
    await assert.rejects(client.insights({ maxResults: 0 }), (error: unknown) => error instanceof HebbsError && error.status === 400);
  });

  it("subscribes over Server-Sent Events: a fed chunk surfaces a memory once, with its strategy details", async () => {
    const topic = `${entity}-boiler`;
    const boiler = await client.remember({ content: "The basement boiler was serviced by Ortiz Heating in March.", entityId: topic });
    await assert.rejects(client.subscribe({ confidenceThreshold: 2 }), (error: unknown) => {
      assert.ok(error instanceof HebbsError);
      assert.equal(error.status, 400);
      assert.match(error.message, /confidence_threshold/);
      return true;
    });
    const subscription = await client.subscribe({ entityId: topic, confidenceThreshold: 0.4 });
    assert.ok(subscription.id > 0);
    await subscription.feed("Who serviced the basement ");
    await subscription.feed("boiler in March? ");
    const push = await subscription.next();
    assert.ok(push, "a push for the fed chunk");
    assert.equal(push.memory.id, boiler.id);
    assert.ok(push.confidence >= 0.4);
    assert.equal(push.strategyDetails[0].strategy, "similarity");
    assert.equal(typeof push.memory.decayScore, "number");
    await subscription.feed("Was the basement boiler serviced in March by Ortiz? ");
    assert.equal(await subscription.next(1_000), undefined); // the same memory is never pushed twice
    await subscription.close();
    assert.equal(subscription.closed, true);
    await assert.rejects(subscription.feed("anyone there?"), (error: unknown) => error instanceof HebbsError && error.status === 404);
  });

  it("reports the server's health", async () => {
    const health = await client.health();
    assert.equal(health.status, "ok");
    assert.ok(health.memories >= 3);
  });

  it("raises the server's reason for bad input, and for a missing or wrong key", async () => {
    await assert.rejects(client.recall({ cue: "x", topK: -1 }), (error: unknown) => {
      assert.ok(error instanceof HebbsError);
      assert.equal(error.status, 400);
      assert.match(error.message, /top_k/);
      return true;
    });
    const stranger = new HebbsClient({ baseUrl: served.url, apiKey: "hb_wrong_key_000000000000000000000000" });
    await assert.rejects(stranger.recall({ cue: "disk" }), (error: unknown) => error instanceof HebbsError && error.status === 401);
    // The served key is bound to the tenant `default`: naming another tenant is refused, naming its own is not.
    const elsewhere = new HebbsClient({ baseUrl: served.url, apiKey: served.apiKey, tenant: "other-team" });
    await assert.rejects(elsewhere.recall({ cue: "disk" }), (error: unknown) => error instanceof HebbsError && error.status === 403 && /tenant/.test(error.message));
    const own = new HebbsClient({ baseUrl: served.url, apiKey: served.apiKey, tenant: "default" });
    assert.ok((await own.recall({ cue: "staging disk full", topK: 1 })).results.length === 1);
    const nowhere = new HebbsClient({ baseUrl: "http://127.0.0.1:9", apiKey: "x", timeoutMs: 2_000 });
    await assert.rejects(nowhere.health(), (error: unknown) => error instanceof HebbsError && error.status === 0);
  });
});
