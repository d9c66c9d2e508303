export * from "./netTuning";
export * from "./nicQueues";
export { Become } from "./validation";
