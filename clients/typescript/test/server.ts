/** A real `hebbs serve` for the tests: the one at HEBBS_URL if given, else one started here on free ports. */

import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Served {
  url: string;
  apiKey: string;
  stop(): Promise<void>;
}

const KEY = "hb_ts_test_" + "k".repeat(32);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function waitReady(url: string, child: ChildProcess | null, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let delay = 50;
  for (;;) {
    if (child && child.exitCode !== null) throw new Error(`hebbs serve exited with ${child.exitCode}`);
    try {
      const response = await fetch(`${url}/v1/health/ready`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`hebbs serve at ${url} did not become ready`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 1.5, 500);
  }
}

export async function serve(): Promise<Served> {
  if (process.env.HEBBS_URL) {
    const url = process.env.HEBBS_URL;
    await waitReady(url, null, 60_000);
    return { url, apiKey: process.env.HEBBS_API_KEY ?? "", stop: async () => {} };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "hebbs-ts-"));
  const [rest, grpc] = [await freePort(), await freePort()];
  const child = spawn(process.env.HEBBS_BIN ?? "hebbs",
    ["--data-dir", dataDir, "serve", "--rest-port", String(rest), "--grpc-port", String(grpc)],
    { env: { ...process.env, HEBBS_API_KEY: KEY }, stdio: ["ignore", "ignore", "inherit"] });
  const url = `http://127.0.0.1:${rest}`;
  await waitReady(url, child, 180_000);
  return {
    url,
    apiKey: KEY,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => {
          rmSync(dataDir, { recursive: true, force: true });
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}
