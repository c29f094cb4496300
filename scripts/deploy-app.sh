#!/usr/bin/env bash
# The production directory of one app, after `pnpm build`: the app's package.json and dist/, and a
# node_modules with its production dependencies only (workspace packages as copies of their
# package.json "files": dist/ and data, no sources). `node dist/main.js` in it runs the app.
# docker/Dockerfile builds its images with this script; test/e2e/production-build.test.ts builds
# the same directory and runs the gateway and the worker from it.
#   usage: scripts/deploy-app.sh <gateway|worker|upstream-sim|admin> <target dir>
#
# inject-workspace-packages: pnpm 10 deploys from the lockfile only with injected workspace
#   packages; set for this command alone, the workspace keeps its symlinks (edits show at once).
# --no-optional: the lockfile binds the optional peer of valibot (typescript) to the workspace
#   root's dev dependencies; this leaves it out. The only other optional package in the apps' graph is msgpackr-extract, msgpackr's
#   native speed-up, which falls back to JavaScript.
# --offline: from the store the install filled (in the image: `pnpm fetch`), no network.
set -euo pipefail
app="${1:?usage: deploy-app.sh <app> <target dir>}"
target="${2:?usage: deploy-app.sh <app> <target dir>}"
cd "$(dirname "$0")/.."
if [ ! -f "apps/$app/dist/main.js" ]; then
  echo "deploy-app: apps/$app/dist/main.js is missing; run \`pnpm build\` first" >&2
  exit 1
fi
pnpm --config.inject-workspace-packages=true --filter "@gen/$app" --prod --no-optional --offline deploy "$target"
