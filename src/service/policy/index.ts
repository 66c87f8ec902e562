/** The policy engine (turnkey-api.md 8): the expression language, facts, and the 8.2 decision. */
export type {
  Expr,
  Position,
  BinaryOp,
  LogicalOp,
  RelationalOp,
  MacroName,
  MethodName,
  FunctionName,
} from './ast.js';
export { parseExpression, MAX_NESTING } from './parseExpression.js';
export { printExpression } from './printExpression.js';
export { MAX_EXPRESSION_LENGTH } from './tokenize.js';
export { parseTimestamp } from './parseTimestamp.js';
export type { CronSpanSpec } from './parseCronSpan.js';
export { parseCronSpan, isWithinCronSpan, MAX_SPAN_MINUTES } from './parseCronSpan.js';
export type { Value, Struct, EvaluationErrorKind } from './values.js';
export { Timestamp, PolicyEvaluationError, EVALUATION_ERROR_KINDS } from './values.js';
export type { EvaluationEnv } from './evaluate.js';
export { evaluate } from './evaluate.js';
export type { PolicyExpressionRole, PolicyExpressions, CompiledExpressions } from './compilePolicy.js';
export { compilePolicy, compileExpression, POLICY_KEYWORDS } from './compilePolicy.js';
export type {
  PolicyEffect,
  PolicyOutcome,
  DecisionOutcome,
  PolicyToEvaluate,
  PolicyUser,
  PolicyCredential,
  RootQuorum,
  EvaluatePoliciesInput,
  PolicyEvaluation,
  PolicyDecision,
} from './evaluatePolicies.js';
export { evaluatePolicies, POLICY_EFFECTS, POLICY_OUTCOMES, DECISION_OUTCOMES } from './evaluatePolicies.js';
export type { ActivityResource, ActivityAction } from './activityResourceAction.js';
export {
  activityKind,
  activityResourceAction,
  ACTIVITY_RESOURCES,
  ACTIVITY_ACTIONS,
} from './activityResourceAction.js';
export type {
  BuildFactsInput,
  WalletFacts,
  PrivateKeyFacts,
  TransactionFacts,
  TransactionChain,
} from './buildFacts.js';
export { buildFacts, TRANSACTION_CHAINS } from './buildFacts.js';
