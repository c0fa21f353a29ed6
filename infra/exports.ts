/**
 * Asynchronous spend exports in AWS (shared/spend/exports.ts): the private bucket of the export files, the job queue
 * with its dead-letter queue, and the worker that turns a job into a gzip CSV file — each grant exactly what is used:
 *
 *   POST /spend/exports   sqs:SendMessage on the jobs queue                  (routes with `queuesExports`)
 *   the worker            s3:PutObject + s3:AbortMultipartUpload on exports/* (the multipart upload; nothing else)
 *   GET /spend/exports/id s3:GetObject on exports/*                          (routes with `signsExportLinks`: a
 *                         pre-signed URL carries the rights of whoever signed it, so the signer needs them)
 */
import { Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { BlockPublicAccess, Bucket, BucketEncryption, CfnBucket, ObjectOwnership, type IBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { EXPORT_PREFIX } from '#shared/spend/export-files.ts';
import type { Route } from '#shared/routes.ts';
import { BurnrateFunction } from './burnrate-function.ts';

/**
 * The worker's timeout: Lambda's most. A year of a SCALE account (~3.7M rows) is ~1,000 Query pages of 1 MB; at
 * DynamoDB's usual page times that is well inside it (docs/performance.md "Asynchronous export": measured locally, not in AWS).
 */
export const EXPORT_WORKER_TIMEOUT = Duration.minutes(15);
/** Receives of one job before the dead-letter queue: the worker settles failures itself; a second try covers a crash. */
export const EXPORTS_MAX_RECEIVE_COUNT = 2;

export interface SpendExportsProps {
  table: ITable;
  /** Where the bucket's server access logs go (the dashboard's log bucket, prefix `exports/`). */
  logBucket: IBucket;
}

export class SpendExports extends Construct {
  readonly bucket: Bucket;
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly worker: BurnrateFunction;

  constructor(scope: Construct, id: string, props: SpendExportsProps) {
    super(scope, id);
    // Files of account data, kept 1 day (the download links live 1 hour): private, encrypted, TLS only. RETAIN like
    // the table: a stack deletion must not fail on a non-empty bucket (the lifecycle empties it within a day or two).
    this.bucket = new Bucket(this, 'Files', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: BucketEncryption.S3_MANAGED,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      serverAccessLogsBucket: props.logBucket,
      serverAccessLogsPrefix: 'exports/',
      lifecycleRules: [{ prefix: EXPORT_PREFIX, expiration: Duration.days(1), abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    new Alarm(this, 'DeadLetterAlarm', {
      alarmDescription: 'Burnrate: an export job crashed the export worker twice and waits in the dead-letter queue',
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: 'Maximum' }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    this.queue = new Queue(this, 'Jobs', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // AWS's advice for Lambda consumers: at least 6× the function timeout.
      visibilityTimeout: Duration.seconds(EXPORT_WORKER_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: EXPORTS_MAX_RECEIVE_COUNT },
    });

    this.worker = new BurnrateFunction(this, 'Worker', {
      entry: 'spend/export-worker',
      description: 'Builds asynchronous spend exports: the export rows index, page by page, as gzip CSV into S3',
      table: props.table,
      timeout: EXPORT_WORKER_TIMEOUT,
      memorySize: 1024,
      environment: { EXPORTS_BUCKET: this.bucket.bucketName },
      // The export (GetItem), its progress and settlement (UpdateItem), its slot freed (DeleteItem), the rows and the
      // keys' labels (Query on gsi1).
      grants: { table: ['GetItem', 'UpdateItem', 'DeleteItem', 'Query'] },
    });
    this.worker.function.addToRolePolicy(
      new PolicyStatement({ actions: ['s3:PutObject', 's3:AbortMultipartUpload'], resources: [this.objects()] }),
    );
    this.acknowledgeObjectWildcard(this.worker);
    // One job at a time per instance; at most 5 exports build at once, whatever a burst of starts.
    this.worker.function.addEventSource(new SqsEventSource(this.queue, { batchSize: 1, maxConcurrency: 5, reportBatchItemFailures: true }));
  }

  /** The grants and settings a route's flags ask for (shared/routes.ts `queuesExports`, `signsExportLinks`). */
  grantRoute(fn: BurnrateFunction, route: Route): void {
    if (route.queuesExports) {
      fn.function.addEnvironment('EXPORTS_QUEUE_URL', this.queue.queueUrl);
      // The queue's SSE is SQS-managed (no KMS grant).
      fn.function.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.queue.queueArn] }));
    }
    if (route.signsExportLinks) {
      fn.function.addEnvironment('EXPORTS_BUCKET', this.bucket.bucketName);
      fn.function.addToRolePolicy(new PolicyStatement({ actions: ['s3:GetObject'], resources: [this.objects()] }));
      this.acknowledgeObjectWildcard(fn);
    }
  }

  /** The export objects: `<bucket ARN>/exports/*`. */
  private objects(): string {
    return this.bucket.arnForObjects(`${EXPORT_PREFIX}*`);
  }

  /** cdk-nag's one finding of the object grant (its granular id), on this function's role only. */
  private acknowledgeObjectWildcard(fn: BurnrateFunction): void {
    Validations.of(fn.role).acknowledge({
      id: exportObjectsFinding(this),
      reason:
        'Export files are named by account and export id (exports/<accountId>/<exportId>.csv.gz), made at run time: the grant ' +
        'names the bucket and its exports/ prefix, no other bucket or prefix, and one action (the worker: write; the status ' +
        'route: read, to sign download links).',
    });
  }
}

/** cdk-nag's id of the finding "an action on <ExportsFiles…>.Arn/exports/*". */
export function exportObjectsFinding(exports: SpendExports): string {
  const logicalId = Stack.of(exports).getLogicalId(exports.bucket.node.defaultChild as CfnBucket);
  return `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${EXPORT_PREFIX}*]`;
}
