/**
 * `npm run typecheck` (and `npm test` before vitest): the two TypeScript programs at once — the API, local stack,
 * tests and benches (`tsconfig.json`) and the dashboard (`web/tsconfig.json`, DOM and JSX). Each `tsc` runs on one
 * core, so on two cores side by side they take as long as the larger one. Both always check everything; the exit
 * code is the first failure's.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, ...args], { stdio: 'inherit' });
    child.on('error', () => resolve(1));
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
const codes = await Promise.all([run(['--noEmit']), run(['-p', 'web'])]);
process.exitCode = codes.find((code) => code !== 0) ?? 0;
