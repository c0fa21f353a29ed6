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
    // Sparse, a NUMBER sort key: a month's customers (and features) by their month's cost in µ$, which the one writer
    // ADDs to as it adds to their sums — GET /spend?groupBy=customer reads the top 100 in one page.
    { name: 'gsi3', partitionKey: 'gsi3pk', sortKey: 'gsi3sk', sortType: 'N' },
  ],
} as const;

/** CreateTable input for DynamoDB Local (on-demand, like the CDK table). */
export function createTableInput(tableName: string) {
  const attr = (name: string, type: 'S' | 'N' = 'S') => ({ AttributeName: name, AttributeType: type });
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [
      attr(TABLE.partitionKey),
      attr(TABLE.sortKey),
      ...TABLE.indexes.flatMap((i) => [attr(i.partitionKey), attr(i.sortKey, 'sortType' in i ? i.sortType : 'S')]),
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
