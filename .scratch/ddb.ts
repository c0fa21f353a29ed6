import { startDynamoDbLocal } from '#local/dynamodb.ts';
const t0 = Date.now();
const d = await startDynamoDbLocal({ port: 8123, dir: '/tmp/br-scratch/ddb', tableName: 'burnrate' });
console.log('ready', Date.now() - t0, d.endpoint);
const t1 = Date.now(); await d.stop(); console.log('stopped', Date.now()-t1, d.child.exitInfo);
