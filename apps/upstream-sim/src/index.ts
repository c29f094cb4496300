export { createUpstreamSim, type UpstreamSimOptions } from "./create-upstream-sim.ts";
export { createOpenAISim, OPENAI_SIM_API_KEY, type OpenAISimOptions } from "./openai/create-openai-sim.ts";
