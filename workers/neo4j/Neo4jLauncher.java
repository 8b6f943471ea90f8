// Runs Neo4j 5 Community embedded with only the Bolt connector (no auth, no HTTP).
// Source-file mode, no build step:
//   java -Xmx512m -cp "$LIB/*" workers/neo4j/Neo4jLauncher.java \
//        --home DIR [--bolt 127.0.0.1:7687] [--pagecache 128m]
// Prints "neo4j ready bolt://HOST:PORT" once Bolt accepts connections; stops on SIGTERM.

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;
import org.neo4j.logging.Level;
import org.neo4j.logging.log4j.Log4jLogProvider;

public class Neo4jLauncher {
    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new HashMap<>(Map.of("--bolt", "127.0.0.1:7687", "--pagecache", "128m"));
        for (int i = 0; i + 1 < args.length; i += 2) opts.put(args[i], args[i + 1]);
        if (!opts.containsKey("--home") || args.length % 2 != 0) {
            System.err.println("usage: Neo4jLauncher --home DIR [--bolt HOST:PORT] [--pagecache 128m] [--checkpoint-s 60]");
            System.exit(2);
        }
        Path home = Path.of(opts.get("--home")).toAbsolutePath();
        SocketAddress bolt = new SocketAddress(opts.get("--bolt").split(":")[0],
                Integer.parseInt(opts.get("--bolt").split(":")[1]));

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
                .setUserLogProvider(new Log4jLogProvider(System.out, Level.INFO))
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, bolt)
                .setConfig(BoltConnector.advertised_address, bolt)
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, false)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(opts.get("--pagecache")))
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                // Transaction logs serve backups and clusters, which a local store has not.
                // They also keep every string ever written, so a forgotten user's words would
                // stay on disk: keep only the newest log file (pruned at each checkpoint), and
                // rotate small, so that `memq scrub` (workers/scrub.py) pushes a forget out of
                // the kept file by writing one file's worth of filler and checkpointing.
                .setConfig(GraphDatabaseSettings.keep_logical_logs, "false")
                .setConfig(GraphDatabaseSettings.logical_log_rotation_threshold, ByteUnit.mebiBytes(1))
                // Pruning happens at a checkpoint, and this build registers no db.checkpoint
                // procedure: checkpoint every minute that saw a write (default 15 minutes).
                .setConfig(GraphDatabaseSettings.check_point_interval_time,
                        Duration.ofSeconds(Long.parseLong(opts.getOrDefault("--checkpoint-s", "60"))))
                // Bolt's netty defaults wait ~10 s on shutdown; stop promptly instead.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0)
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_timeout, Duration.ofSeconds(2))
                .build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("neo4j stopping");
            dbms.shutdown();
            System.out.println("neo4j stopped");
            stopped.countDown();
        }));

        // build() returns after the connectors started; confirm Bolt really accepts connections.
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress(bolt.getHostname(), bolt.getPort()), 5000);
        } catch (Exception e) {
            System.err.println("neo4j bolt not reachable on " + bolt + ": " + e);
            System.exit(1);  // runs the shutdown hook
        }
        System.out.println("neo4j ready bolt://" + bolt + " home=" + home);
        System.out.flush();
        stopped.await();
    }
}
