export { createUpstreamSim, type UpstreamSimOptions } from "./create-upstream-sim.ts";
