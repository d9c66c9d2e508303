export * from "./netTuning";
export * from "./nicQueues";
export type { ConnectionInput } from "./common";
