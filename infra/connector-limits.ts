/**
 * The limits phase of the connection syncs (shared/sync/limits.ts), in a nested stack of its own: per provider a FIFO
 * queue its sync worker writes after the import (one message group per connection, so that one connection's passes
 * run in the order its syncs queued them: a release after an earlier pass), and a function that opens the admin key
 * itself to read back and pull that provider's levers (functions/connections/limits-<provider>.ts). The queues share
 * one FIFO dead-letter queue and its alarm.
 *
 * A nested stack because the main stack is at CloudFormation's 500 resources (docs/deployment.md "Resources per
 * stack"): these 21 resources count as one there.
 */
import { Duration, NestedStack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption, type IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { PROVIDERS, type Provider } from '#shared/connections/model.ts';
import { providerName } from '#shared/providers/names.ts';
import { BurnrateFunction } from './burnrate-function.ts';

/** A connection's limits pass: its budgets and anomaly rules, and a lever call for each key it stops or lets go. */
export const CONNECTOR_LIMITS_TIMEOUT = Duration.minutes(2);
/** Receives of one limits pass before it moves to the dead-letter queue (its connection's later passes wait meanwhile). */
export const CONNECTOR_LIMITS_MAX_RECEIVE_COUNT = 3;

export interface ConnectorLimitsProps {
  table: ITable;
  connectionsKey: IKey;
  /** The key condition of every Decrypt of an admin key (its encryption context: accountId, connectionId). */
  adminKeyContext: Record<string, unknown>;
  alertsQueue: IQueue;
}

export class ConnectorLimits extends NestedStack {
  /** Each provider's limits queue (FIFO): its worker sends to it. */
  readonly queues: Record<Provider, Queue>;
  readonly functions: BurnrateFunction[] = [];

  constructor(scope: Construct, id: string, props: ConnectorLimitsProps) {
    super(scope, id, { description: 'Burnrate: the limits phase of the connection syncs (FIFO queues and one function per provider)' });
    const deadLetterQueue = new Queue(this, 'ConnectorLimitsDeadLetterQueue', {
      fifo: true,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    new Alarm(this, 'ConnectorLimitsDeadLetterAlarm', {
      alarmDescription: "Burnrate: a connection's limits pass (its levers) failed 3 times and waits in the dead-letter queue",
      metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const queues: Partial<Record<Provider, Queue>> = {};
    for (const provider of PROVIDERS) {
      const suffix = providerName(provider);
      const queue = new Queue(this, `ConnectorLimitsQueue${suffix}`, {
        fifo: true,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        visibilityTimeout: Duration.seconds(CONNECTOR_LIMITS_TIMEOUT.toSeconds() * 6),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: CONNECTOR_LIMITS_MAX_RECEIVE_COUNT },
      });
      queues[provider] = queue;
      const fn = new BurnrateFunction(this, `ConnectorLimits${suffix}`, {
        entry: `connections/limits-${provider}`,
        description: `Pulls and lets go the levers of one ${suffix} connection per message after its sync: stop budgets and spend-anomaly rules`,
        table: props.table,
        timeout: CONNECTOR_LIMITS_TIMEOUT,
        environment: {
          CONNECTIONS_KMS_KEY_ID: props.connectionsKey.keyArn,
          ALERTS_QUEUE_URL: props.alertsQueue.queueUrl,
          // Accounts with a spend-anomaly rule that stops keys: their connections every 5 minutes (the dispatch runs every minute).
          ANOMALY_SYNC_INTERVAL_MS: String(5 * 60_000),
        },
        // The connection and a deleted one's release job (GetItem); budgets, rules, lever states and spend (Query,
        // BatchGetItem); lever states, alerts and their fired items (PutItem, UpdateItem); the release job once done
        // (DeleteItem); a sooner next sync (UpdateItem).
        grants: { table: ['GetItem', 'Query', 'BatchGetItem', 'PutItem', 'DeleteItem', 'UpdateItem'] },
      });
      // Like the sync, it unwraps the connection's admin key, and only with its encryption context.
      fn.function.addToRolePolicy(new PolicyStatement({ actions: ['kms:Decrypt'], resources: [props.connectionsKey.keyArn], conditions: props.adminKeyContext }));
      fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [props.alertsQueue.queueArn] }));
      // One pass per invocation; SQS FIFO hands a connection's next message only once this one is done, so many
      // connections' passes run at once and a failed one comes back before its connection's later ones.
      fn.function.addEventSource(new SqsEventSource(queue, { batchSize: 1, reportBatchItemFailures: true }));
      this.functions.push(fn);
    }
    this.queues = queues as Record<Provider, Queue>;
  }
}
