export { createConsoleApp } from "./console-app.ts";
export { buildConsoleDeps, closeConsoleDeps, type ConsoleDeps } from "./console-deps.ts";
export { createConsoleRouter, type ConsoleRouterOptions } from "./console-router.ts";
