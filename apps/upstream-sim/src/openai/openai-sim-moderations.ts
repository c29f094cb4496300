import { simulateGeneration } from "@gen/simulator";
import type { Router } from "express";
import { HUGE_ANSWER_BYTES, sendPaddedAnswer } from "../padded-answer.ts";
import { parseUpDirectives } from "../up-directives.ts";
import type { OpenAISimContext } from "./openai-sim-context.ts";
import { OpenAIErrorType, isObject, openAIId, sendError } from "./openai-sim-wire.ts";

function isInput(value: unknown): value is string | string[] {
  return typeof value === "string" || (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === "string"));
}

/** `POST /v1/moderations`: one result per input string, scored by the simulated moderation. */
export function mountModerations(router: Router, context: OpenAISimContext): void {
  router.post("/v1/moderations", (req, res) => {
    const body: unknown = req.body;
    if (!isObject(body) || !isInput(body.input)) {
      sendError(res, 400, OpenAIErrorType.InvalidRequest, "Invalid type for 'input': expected a string or an array of strings.", {
        code: "invalid_type",
        param: "input",
      });
      return;
    }
    const directives = parseUpDirectives(body);
    if (context.refuse(req, res, directives, "content_policy_violation")) return;
    const model = typeof body.model === "string" ? body.model : "omni-moderation-latest";
    const results = (typeof body.input === "string" ? [body.input] : body.input).map((input) => {
      const verdict = simulateGeneration({ endpoint: "moderations", model, params: { input } }).data as { categories: Record<string, boolean> };
      const appliedTypes = Object.fromEntries(Object.keys(verdict.categories).map((name) => [name, ["text"]]));
      return { ...verdict, category_applied_input_types: appliedTypes };
    });
    const answer = { id: openAIId("modr-"), model, results };
    if (directives.hugeSubmit || directives.endlessSubmit) return sendPaddedAnswer(res, 200, answer, directives.hugeSubmit ? HUGE_ANSWER_BYTES : Infinity);
    res.json(answer);
  });
}
