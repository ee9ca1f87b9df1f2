/**
 * The fleet simulation's door: what `bench/scale.mjs` bundles and calls. The simulation (`simulate.ts`) and the goals
 * that judge its results (`goals.ts`) are both behind it, so that neither imports the other's callers.
 */
export { accessPathCost, simulateHotSubuser } from "./access-path";
export { measureD1 } from "./d1";
export { ACCOUNTS, BATCH_SIZES, MIXES } from "./fleet";
export { missedGoals, wholeBills } from "./goals";
export { FULL, SHORT, simulateScenario } from "./simulate";
