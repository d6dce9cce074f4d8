export * from "./client.js";
export { Subscription, type SubscribePush } from "./subscription.js";
export type { Camelize, CamelCase } from "./case.js";
