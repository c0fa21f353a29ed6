/**
 * A small IAM policy evaluator for the artifact tests: does a function's execution role allow one AWS request?
 *
 * Covers what our policies use (test/artifacts/iam.test.ts pins each rule): `Allow` and `Deny` statements,
 * `Action`/`NotAction` with `*` and `?` wildcards (case-insensitive, as IAM matches actions), `Resource`/
 * `NotResource` with wildcards (case-sensitive), and the condition operators `StringEquals`, `StringNotEquals`,
 * `StringLike`, `StringNotLike`, `StringEqualsIgnoreCase` (each also `…IfExists`, and with the set operators
 * `ForAllValues:` / `ForAnyValue:` for multi-valued keys such as `kms:EncryptionContextKeys`). An explicit Deny wins;
 * no matching Allow is an implicit deny. Any other condition operator throws, and so does a multi-valued key under
 * a single-valued operator: the evaluator never guesses "allowed".
 */

export interface PolicyStatement {
  Sid?: string;
  Effect: 'Allow' | 'Deny' | string;
  Action?: string | string[];
  NotAction?: string | string[];
  /** Resolved to strings (test/artifacts/cfn.ts resolves the template's intrinsics first). */
  Resource?: string | string[];
  NotResource?: string | string[];
  Condition?: Record<string, Record<string, string | string[]>>;
}

/** One authorization IAM makes for a request: `dynamodb:PutItem` on a table ARN, with its condition keys. */
export interface AuthorizationRequest {
  action: string;
  resource: string;
  /** Condition keys of the request (`ses:FromAddress`), case-insensitive by name; a list for a multi-valued key. */
  context?: Record<string, string | string[]>;
}

export interface Decision {
  allowed: boolean;
  /** Which statement decided (its Sid or index), or why nothing matched. */
  reason: string;
}

const list = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** IAM's wildcard match: `*` any run of characters, `?` one character; everything else literal. */
export function wildcardMatch(pattern: string, value: string, ignoreCase = false): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

type ConditionTest = (expected: string, actual: string) => boolean;

const CONDITION_OPERATORS: Record<string, { test: ConditionTest; negated: boolean }> = {
  StringEquals: { test: (e, a) => e === a, negated: false },
  StringNotEquals: { test: (e, a) => e === a, negated: true },
  StringEqualsIgnoreCase: { test: (e, a) => e.toLowerCase() === a.toLowerCase(), negated: false },
  StringLike: { test: (e, a) => wildcardMatch(e, a), negated: false },
  StringNotLike: { test: (e, a) => wildcardMatch(e, a), negated: true },
};

/** Whether every condition of a statement holds for the request's context keys. */
export function conditionsHold(condition: PolicyStatement['Condition'], context: Record<string, string | string[]> = {}): boolean {
  if (!condition) return true;
  const byKey = new Map(Object.entries(context).map(([key, value]) => [key.toLowerCase(), value]));
  for (const [operatorName, entries] of Object.entries(condition)) {
    // `ForAllValues:` / `ForAnyValue:` compare a multi-valued key's set of values with the policy's.
    const setOperator = /^(ForAllValues|ForAnyValue):/.exec(operatorName)?.[1];
    const bare = setOperator ? operatorName.slice(setOperator.length + 1) : operatorName;
    const ifExists = bare.endsWith('IfExists');
    const operator = CONDITION_OPERATORS[ifExists ? bare.slice(0, -'IfExists'.length) : bare];
    if (!operator) throw new Error(`IAM condition operator ${operatorName} is not supported by the artifact tests' evaluator`);
    for (const [key, expected] of Object.entries(entries)) {
      const actual = byKey.get(key.toLowerCase());
      // One value satisfies the operator: a positive one when any expected value matches, a negated one when none does.
      const holdsFor = (value: string) => {
        const anyMatches = list(expected).some((e) => operator.test(String(e), value));
        return operator.negated ? !anyMatches : anyMatches;
      };
      if (setOperator) {
        const values = actual === undefined ? [] : list(actual);
        // ForAllValues holds for an empty or missing set (every one of no values matches); ForAnyValue does not.
        if (setOperator === 'ForAllValues' ? !values.every(holdsFor) : !values.some(holdsFor)) return false;
        continue;
      }
      if (Array.isArray(actual)) throw new Error(`${key} has several values: IAM compares it with ForAllValues: or ForAnyValue:, not ${operatorName}`);
      if (actual === undefined) {
        // A missing key: …IfExists and the negated operators hold; the positive ones do not.
        if (ifExists || operator.negated) continue;
        return false;
      }
      if (!holdsFor(actual)) return false;
    }
  }
  return true;
}

function statementMatches(statement: PolicyStatement, request: AuthorizationRequest): boolean {
  const actionMatches = (patterns: string[]) => patterns.some((p) => wildcardMatch(p, request.action, true));
  const resourceMatches = (patterns: string[]) => patterns.some((p) => wildcardMatch(p, request.resource));
  if (statement.Action !== undefined && !actionMatches(list(statement.Action))) return false;
  if (statement.NotAction !== undefined && actionMatches(list(statement.NotAction))) return false;
  if (statement.Resource !== undefined && !resourceMatches(list(statement.Resource))) return false;
  if (statement.NotResource !== undefined && resourceMatches(list(statement.NotResource))) return false;
  if (statement.Action === undefined && statement.NotAction === undefined) return false;
  if (statement.Resource === undefined && statement.NotResource === undefined) return false;
  return conditionsHold(statement.Condition, request.context);
}

/** The identity-policy decision for one request: explicit Deny > Allow > implicit deny. */
export function evaluate(statements: readonly PolicyStatement[], request: AuthorizationRequest): Decision {
  const name = (s: PolicyStatement, i: number) => s.Sid ?? `statement ${i}`;
  const matching = statements.map((s, i) => [s, i] as const).filter(([s]) => statementMatches(s, request));
  const deny = matching.find(([s]) => s.Effect === 'Deny');
  if (deny) return { allowed: false, reason: `explicitly denied by ${name(...deny)}` };
  const allow = matching.find(([s]) => s.Effect === 'Allow');
  if (allow) return { allowed: true, reason: `allowed by ${name(...allow)}` };
  return { allowed: false, reason: 'no statement allows it (implicit deny)' };
}
