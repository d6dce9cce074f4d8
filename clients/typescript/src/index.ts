export * from "./client.js";
export type { Camelize, CamelCase } from "./case.js";
