export { createSimulatedProvider, SIM_BASE_DELAY_MS } from "./simulated-provider.ts";
export { simulateGeneration } from "./simulate-generation.ts";
export { STORAGE_FAULT_EXTENSION, isStorageFault } from "./storage-fault.ts";
