/**
 * Lists promises nobody waits for in the production sources: an expression statement whose value is
 * a promise, not awaited, returned or explicitly `void`ed. The store's transactions are async, so a
 * forgotten `await` on a write inside one would let the transaction commit without it.
 * Usage: node --import tsx scripts/floating-promises.ts [tsconfig]; exit 1 when any is found.
 */
import ts from 'typescript';

export function findFloatingPromises(tsconfigPath: string): string[] {
  const config = ts.readConfigFile(tsconfigPath, (f) => ts.sys.readFile(f));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, tsconfigPath.replace(/[^/]*$/, ''));
  const program = ts.createProgram(parsed.fileNames, parsed.options);
  const checker = program.getTypeChecker();
  const found: string[] = [];
  const isPromise = (t: ts.Type): boolean => {
    if (t.isUnion()) return t.types.some(isPromise);
    const name = t.getSymbol()?.getName();
    return (
      name === 'Promise' || (t.getProperty('then') !== undefined && t.getProperty('catch') !== undefined)
    );
  };
  // A chain that ends in .catch(…) or .then(ok, fail) (possibly followed by .finally) handles its rejection.
  const handled = (e: ts.Expression): boolean => {
    if (!ts.isCallExpression(e) || !ts.isPropertyAccessExpression(e.expression)) return false;
    const name = e.expression.name.text;
    if (name === 'catch') return true;
    if (name === 'then') return e.arguments.length >= 2;
    if (name === 'finally') return handled(e.expression.expression);
    return false;
  };
  for (const sf of program.getSourceFiles()) {
    if (sf.isDeclarationFile || sf.fileName.includes('/node_modules/')) continue;
    if (/\.test\.ts$/.test(sf.fileName)) continue;
    const visit = (n: ts.Node): void => {
      if (ts.isExpressionStatement(n)) {
        const e = n.expression;
        const call = ts.isCallExpression(e) || ts.isNewExpression(e);
        if (call && !handled(e) && isPromise(checker.getTypeAtLocation(e))) {
          const { line } = sf.getLineAndCharacterOfPosition(n.getStart(sf));
          found.push(`${sf.fileName}:${line + 1}: ${n.getText(sf).split('\n')[0]}`);
        }
      }
      // Callbacks handed to forEach that return promises run unawaited too.
      if (
        ts.isCallExpression(n) &&
        ts.isPropertyAccessExpression(n.expression) &&
        n.expression.name.text === 'forEach' &&
        n.arguments[0] !== undefined
      ) {
        const sig = checker.getSignaturesOfType(
          checker.getTypeAtLocation(n.arguments[0]),
          ts.SignatureKind.Call,
        )[0];
        if (sig !== undefined && isPromise(checker.getReturnTypeOfSignature(sig))) {
          const { line } = sf.getLineAndCharacterOfPosition(n.getStart(sf));
          found.push(`${sf.fileName}:${line + 1}: forEach with an async callback`);
        }
      }
      ts.forEachChild(n, visit);
    };
    visit(sf);
  }
  return found;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const found = findFloatingPromises(process.argv[2] ?? 'tsconfig.json');
  for (const f of found) console.log(f);
  process.exitCode = found.length > 0 ? 1 : 0;
}
