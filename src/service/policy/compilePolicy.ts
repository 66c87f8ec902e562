import type { Expr } from './ast.js';
import { parseExpression } from './parseExpression.js';
import { syntaxError } from './tokenize.js';

/** Which top-level keywords each expression of a policy may read (turnkey-api.md 8.3). */
export const POLICY_KEYWORDS = {
  condition: [
    'activity',
    'eth',
    'solana',
    'tron',
    'bitcoin',
    'tempo',
    'wallet',
    'wallets',
    'private_key',
    'wallet_account',
    'time',
  ],
  consensus: ['approvers', 'credentials', 'time'],
  time: ['time'],
} as const;

export type PolicyExpressionRole = keyof typeof POLICY_KEYWORDS;

// The fields a namespace keyword has; anything else under it is a typo worth an error at creation.
const NAMESPACES: Readonly<Record<string, readonly string[]>> = {
  eth: ['tx', 'eip_712', 'eip_7702_authorization'],
  solana: ['tx'],
  tron: ['tx'],
  bitcoin: ['tx'],
  tempo: ['tx'],
  time: ['now'],
};

/** Throws FIELD_INVALID at the first keyword the role may not read, or an unknown namespace field. */
function checkKeywords(e: Expr, role: PolicyExpressionRole, field: string, bound: ReadonlySet<string>): void {
  const allowed: readonly string[] = POLICY_KEYWORDS[role];
  const visit = (x: Expr, vars: ReadonlySet<string>): void => {
    switch (x.kind) {
      case 'int':
      case 'string':
      case 'bool':
      case 'timestamp':
      case 'cronSpan':
        return;
      case 'ident':
        if (!vars.has(x.name) && !allowed.includes(x.name)) {
          throw syntaxError(
            field,
            x.pos,
            `unknown identifier '${x.name}' (a ${role} may read ${allowed.map((k) => `'${k}'`).join(', ')})`,
          );
        }
        return;
      case 'member':
        if (x.object.kind === 'ident' && !vars.has(x.object.name)) {
          const fields = NAMESPACES[x.object.name];
          if (fields !== undefined && !fields.includes(x.name)) {
            throw syntaxError(
              field,
              x.pos,
              `'${x.object.name}' has no field '${x.name}' (expected ${fields.map((f) => `'${f}'`).join(', ')})`,
            );
          }
        }
        return visit(x.object, vars);
      case 'list':
        return x.items.forEach((i) => visit(i, vars));
      case 'index':
        visit(x.object, vars);
        return visit(x.index, vars);
      case 'slice':
        visit(x.object, vars);
        if (x.start !== null) visit(x.start, vars);
        if (x.end !== null) visit(x.end, vars);
        return;
      case 'unary':
        return visit(x.operand, vars);
      case 'binary':
        visit(x.left, vars);
        return visit(x.right, vars);
      case 'macro':
        visit(x.target, vars);
        return visit(x.predicate, new Set([...vars, x.variable]));
      case 'method':
        visit(x.target, vars);
        return x.args.forEach((a) => visit(a, vars));
      default: {
        const never: never = x;
        return never;
      }
    }
  };
  visit(e, bound);
}

/**
 * Parses one expression of a policy and checks the keywords it reads. An absent or empty source
 * means "always true" and gives undefined. Throws FIELD_INVALID naming `field`.
 */
export function compileExpression(
  source: string | undefined,
  role: PolicyExpressionRole,
  field: string,
): Expr | undefined {
  if (source === undefined || source.trim() === '') return undefined;
  const expr = parseExpression(source, field);
  checkKeywords(expr, role, field, new Set());
  return expr;
}

export interface PolicyExpressions {
  readonly condition?: string | undefined;
  readonly consensus?: string | undefined;
  readonly time?: string | undefined;
}

export interface CompiledExpressions {
  readonly condition: Expr | undefined;
  readonly consensus: Expr | undefined;
  readonly time: Expr | undefined;
}

/**
 * Checks a policy's expressions as create_policy / update_policy must before storing them; errors
 * name `${prefix}.condition`, `${prefix}.consensus` or `${prefix}.time` with line and column.
 */
export function compilePolicy(p: PolicyExpressions, prefix = 'parameters'): CompiledExpressions {
  return {
    condition: compileExpression(p.condition, 'condition', `${prefix}.condition`),
    consensus: compileExpression(p.consensus, 'consensus', `${prefix}.consensus`),
    time: compileExpression(p.time, 'time', `${prefix}.time`),
  };
}
