import { describe, expect, it } from 'vitest';
import { keyReadPlan } from '#shared/spend/service.ts';

describe('keyReadPlan (groupBy=key: whole months from month × key items, edges from day × key items)', () => {
  it('a range of whole months is one run of months, no days', () => {
    expect(keyReadPlan('2026-01-01', '2026-03-31', '2026-11-23')).toEqual({ months: ['2026-01', '2026-03'], dayRanges: [] });
  });
  it('the current month to today is whole (nothing is dated after the latest day)', () => {
    expect(keyReadPlan('2026-11-01', '2026-11-23', '2026-11-23')).toEqual({ months: ['2026-11', '2026-11'], dayRanges: [] });
  });
  it('…but not in the last 5 minutes of a day, when events may be dated tomorrow', () => {
    expect(keyReadPlan('2026-11-01', '2026-11-23', '2026-11-24')).toEqual({ months: null, dayRanges: [['2026-11-01', '2026-11-23']] });
  });
  it('partial head and tail months are read by day', () => {
    expect(keyReadPlan('2026-01-15', '2026-04-10', '2026-11-23')).toEqual({
      months: ['2026-02', '2026-03'],
      dayRanges: [
        ['2026-01-15', '2026-01-31'],
        ['2026-04-01', '2026-04-10'],
      ],
    });
  });
  it('a range inside one month is one day range; leap February is whole to the 29th', () => {
    expect(keyReadPlan('2026-05-03', '2026-05-09', '2026-11-23')).toEqual({ months: null, dayRanges: [['2026-05-03', '2026-05-09']] });
    expect(keyReadPlan('2028-02-01', '2028-02-29', '2028-11-23')).toEqual({ months: ['2028-02', '2028-02'], dayRanges: [] });
    expect(keyReadPlan('2028-02-01', '2028-02-28', '2028-11-23')).toEqual({ months: null, dayRanges: [['2028-02-01', '2028-02-28']] });
  });
  it('366 days from mid-month: 11 whole months and two edges', () => {
    const plan = keyReadPlan('2025-11-23', '2026-11-23', '2026-11-23');
    expect(plan).toEqual({ months: ['2025-12', '2026-11'], dayRanges: [['2025-11-23', '2025-11-30']] });
  });
});

describe('CSV of the export', () => {
  it('quotes per RFC 4180 and neutralises formula-like text', async () => {
    const { csvText, csvUsd, csvRow } = await import('#shared/spend/csv.ts');
    expect(csvText('plain label')).toBe('plain label');
    expect(csvText('a,b')).toBe('"a,b"');
    expect(csvText('say "hi"')).toBe('"say ""hi"""');
    expect(csvText('two\r\nlines')).toBe('"two\r\nlines"');
    // Formula-like text is quoted and gets a `'` (docs/security.md).
    expect(csvText('=SUM(A1:A9)')).toBe(`"'=SUM(A1:A9)"`);
    expect(csvText('+1')).toBe(`"'+1"`);
    expect(csvText('-2')).toBe(`"'-2"`);
    expect(csvText('@cmd')).toBe(`"'@cmd"`);
    expect(csvText('\tx')).toBe(`"'\tx"`);
    expect(csvText('\rx')).toBe(`"'\rx"`);
    expect(csvText('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
    expect(csvText('a=b')).toBe('a=b');
    expect(csvText('a-b@c+d')).toBe('a-b@c+d');
    // Spreadsheets that split on ';' (or ','): an operator after a separator starts a cell there.
    expect(csvText("x;=cmd|' /c calc'!a0")).toBe(`"x;'=cmd|' /c calc'!a0"`);
    expect(csvText('a;b')).toBe('"a;b"');
    expect(csvText('a,+b;-c;@d')).toBe(`"a,'+b;'-c;'@d"`);
    expect(csvText('a; =b')).toBe(`"a; '=b"`);
    expect(csvText('=a;=b')).toBe(`"'=a;'=b"`);
    expect(csvUsd(0n)).toBe('0.000000');
    expect(csvUsd(1n)).toBe('0.000001');
    expect(csvUsd(9_000_000_000_000_000n)).toBe('9000000000.000000');
    const part = (p: object) => ({ model: 'm', settled: false, correction: false, chargeDate: '2026-11-01', requests: 0n, inputTokens: 0n, cachedInputTokens: 0n, outputTokens: 0n, costMicros: 0n, ...p });
    expect(csvRow({ date: '2026-11-01', keyHash: 'ab', provider: 'openai' }, part({ model: '-x', requests: 2n, inputTokens: 2n ** 60n, outputTokens: 5n, costMicros: 1_234_567n }), null)).toBe(
      `2026-11-01,ab,,,,,false,false,{},openai,"'-x",2,${2n ** 60n},0,5,1.234567`,
    );
    // The key's provider name and project after its label; settled and correction as the row part says; its tags as JSON,
    // neutralised like every text column.
    expect(
      csvRow(
        { date: '2026-11-01', keyHash: 'ab', provider: 'anthropic' },
        part({ settled: true, correction: true, inputTokens: 1n, outputTokens: 1n, costMicros: 5n }),
        { label: 'prod, eu', name: 'Prod key', project: { id: 'wrkspc_1', name: 'Web' }, tags: { team: '=ops', env: 'prod' } },
      ),
    ).toBe(`2026-11-01,ab,"prod, eu",Prod key,wrkspc_1,Web,true,true,"{""team"":""=ops"",""env"":""prod""}",anthropic,m,0,1,0,1,0.000005`);
  });
});

describe('slack message', () => {
  it('names what fired, the amount against the threshold, the key and links to the alert', async () => {
    const { slackMessage, slackUrlProblem } = await import('#shared/notify/slack.ts');
    const alert = {
      id: 'alt_1',
      accountId: 'acc_1',
      type: 'cost_threshold' as const,
      status: 'triggered' as const,
      ruleId: 'rul_1',
      budgetId: null,
      keyHash: 'ab'.repeat(32),
      keyHashes: ['ab'.repeat(32)],
      title: 'Daily: spend reached $1.00',
      message: 'Spend is $2.50.',
      period: '2026-11-23',
      thresholdMicros: 1_000_000,
      observedMicros: 2_500_000,
      deliveries: [],
      triggeredAt: '2026-11-23T10:00:00.000Z',
      acknowledgedAt: null,
      acknowledgedBy: null,
    };
    const m = slackMessage(alert, 'https://app.example');
    expect(m.text).toBe('Daily: spend reached $1.00 — https://app.example/alerts/alt_1');
    expect(JSON.stringify(m.blocks)).toContain('*Amount*\\n$2.50 against $1.00');
    // An alert stored before keyName: its hash prefix (12 characters, docs/features/budgets-and-alerts.md).
    const fields = (msg: typeof m) => (msg.blocks[2] as { fields: { text: string }[] }).fields.map((f) => f.text);
    expect(fields(m)).toContain('*Key*\nabababababab');
    const labelled = slackMessage({ ...alert, keyName: 'Prod <bot> & co' }, 'https://app.example');
    expect(fields(labelled)).toContain('*Key*\nProd &lt;bot&gt; &amp; co');
    expect(slackUrlProblem('https://hooks.slack.com/services/T/B/x', false)).toBeUndefined();
    expect(slackUrlProblem('http://127.0.0.1:9/x', false)).toBeDefined();
    expect(slackUrlProblem('http://127.0.0.1:9/x', true)).toBeUndefined();
    expect(slackUrlProblem('https://hooks.slack.com:444/x', false)).toBeDefined();
  });
});
