/**
 * The one table's shape: read by the CDK stack (infra/) and by the local stack's table creation (local/).
 */
export const TABLE = {
  partitionKey: 'pk',
  sortKey: 'sk',
  /** Epoch seconds; DynamoDB deletes expired items in AWS. DynamoDB Local does not: filter on it where it matters. */
  ttlAttribute: 'expiresAt',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    // Sparse: only alerts with a channel not yet settled carry gsi2 keys — the sweeper's to-do list.
    { name: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

/** CreateTable input for DynamoDB Local (on-demand, like the CDK table). */
export function createTableInput(tableName: string) {
  const attr = (name: string) => ({ AttributeName: name, AttributeType: 'S' as const });
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      attr(TABLE.partitionKey),
      attr(TABLE.sortKey),
      ...TABLE.indexes.flatMap((i) => [attr(i.partitionKey), attr(i.sortKey)]),
    ],
    KeySchema: [
      { AttributeName: TABLE.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: TABLE.indexes.map((i) => ({
      IndexName: i.name,
      KeySchema: [
        { AttributeName: i.partitionKey, KeyType: 'HASH' as const },
        { AttributeName: i.sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
  };
}
