#!/usr/bin/env node
// Entry point of the `countersign` command. With NODE_ENV=production the compiled JavaScript under
// dist/ (`npm run build`) runs as it is: the image carries no compiler or loader. Otherwise the
// TypeScript sources run through tsx's loader, so a fresh clone works right after `npm install`.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/src/cli.js', import.meta.url);
let main;
if (process.env.NODE_ENV === 'production' && existsSync(compiled)) {
  ({ main } = await import(compiled.href));
} else {
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write(
      'countersign: no compiled output (dist/src/cli.js) and no tsx to run the sources: run `npm run build` and start with NODE_ENV=production, or install the development dependencies\n',
    );
    process.exit(70);
  }
  register();
  ({ main } = await import('../src/cli.ts'));
}
process.exitCode = await main(process.argv.slice(2));
