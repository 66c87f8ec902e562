#!/usr/bin/env node
// Entry point of the `countersign` command. Sources are TypeScript run through tsx's loader, so a
// fresh clone works right after `npm install` without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
process.exitCode = await main(process.argv.slice(2));
