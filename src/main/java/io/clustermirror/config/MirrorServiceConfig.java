package io.clustermirror.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import io.smallrye.config.WithName;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Service-level settings, under the KIP's names where it has one. The destination cluster itself is
 * reached with the standard Quarkus {@code kafka.*} client properties ({@code kafka.bootstrap.servers},
 * {@code kafka.security.protocol}, {@code kafka.sasl.*}, ...).
 */
@ConfigMapping(prefix = "mirror")
public interface MirrorServiceConfig {

    State state();

    Source source();

    Destination destination();

    Failed failed();

    Metadata metadata();

    Metrics metrics();

    Http http();

    Flow flow();

    Instance instance();

    /** How this instance is named and reached (describe's {@code runningOn}, {@code GET /v1/instances}). */
    interface Instance {
        /** The instance id (default: the advertised URL's {@code host:port}). */
        Optional<String> id();

        /** Where other instances and clients reach this one (default: {@code http://<host name>:<HTTP port>}). */
        @WithName("advertised.url")
        Optional<String> advertisedUrl();
    }

    /**
     * The KIP's fetcher count: fetcher lanes (connections, each with one Fetch in flight and its own fetch session) per
     * source broker, per mirror. A partition goes to a lane by Kafka's replica fetcher rule.
     */
    @WithName("num.replica.fetchers")
    @WithDefault("1")
    int numReplicaFetchers();

    /**
     * The fetchers of the instance's pool, shared by every mirror: each is one network client carrying its data planes'
     * connections, and holds at most one thread (of a named Vert.x worker pool). The data plane's thread count, whatever
     * the number of mirrors or partitions.
     */
    @WithName("fetcher.threads")
    @WithDefault("2")
    int fetcherThreads();

    /**
     * The instance's budget for fetched batches waiting to be appended, over every partition of every mirror (each
     * partition also has its own 4 MiB queue): what bounds the data plane's heap with 10,000 partitions.
     */
    @WithName("fetcher.buffer.bytes")
    @WithDefault("268435456")
    long fetcherBufferBytes();

    Worker worker();

    interface Worker {
        /**
         * The instance's worker threads for the mirrors' blocking control steps (LOG_TRUNCATION, topic preparation,
         * recreation, a stop's config restore), shared by every mirror, each running at most two tasks at once. 8: the
         * steps wait on the clusters rather than use a core, so four mirrors' worth of concurrent steps, whatever the
         * number of mirrors.
         */
        @WithDefault("8")
        int threads();
    }

    Replication replication();

    interface Replication {
        /**
         * {@code mirror.replication.throttled.rate} (KIP-1279): bytes per second this instance fetches from every source,
         * all its mirrors together. Unset: unlimited. A value set at runtime ({@code PUT /v1/config/{key}}) takes
         * precedence; deleting that one returns to this.
         */
        @WithName("throttled.rate")
        OptionalLong throttledRate();
    }

    interface Flow {
        /**
         * Deadline of a topics:start, of a topic verb's coordinator step, of a stop's release of its partitions, of a
         * verification's start, and of a promote beyond its own {@code timeoutMs}: past it the flow is cancelled with a reason and counted in
         * {@code cluster_mirror_flow_deadline_exceeded_total{flow}}.
         */
        @WithName("timeout.ms")
        @WithDefault("300000")
        long timeoutMs();
    }

    /** The REST control plane's protection (README "Security"). */
    interface Http {
        Auth auth();

        /** The most topics one request may name (verbs, include and exclude lists together). */
        @WithName("max.topics.per.request")
        @WithDefault("1000")
        int maxTopicsPerRequest();

        interface Auth {
            /**
             * Serve the control plane without authentication in the prod profile: logged as a WARN at start and shown
             * in the readiness data. Without it, and without a mechanism, the service refuses to start.
             */
            @WithDefault("false")
            boolean disabled();

            /** Grants of operations on mirror-name patterns, by an id of the operator's choosing. */
            Map<String, Grant> grants();

            interface Grant {
                /** Principal names (a Basic user, a JWT's principal claim, a certificate's subject CN). */
                Optional<List<String>> principals();

                /** Role names, as the mechanism maps them. */
                Optional<List<String>> roles();

                /** CREATE, DESCRIBE, ALTER, DELETE. */
                List<String> operations();

                /** A regular expression the whole mirror name must match. */
                @WithDefault(".*")
                String mirrors();
            }
        }
    }

    interface Metrics {
        /** How often the per-partition lag gauges are refreshed (a Quarkus scheduler interval: {@code 5s}, {@code 1m}). */
        @WithName("partition-lag.refresh")
        @WithDefault("5s")
        String partitionLagRefresh();
    }

    interface Metadata {
        Refresh refresh();

        Sync sync();

        interface Sync {
            /**
             * How long one mirror's metadata sync cycle may take: past it the cycle is cancelled, counted
             * ({@code cluster_mirror_flow_deadline_exceeded_total{flow="sync"}}) and reported in describe, and the next
             * one may start. 120 s: four default destination request timeouts.
             */
            @WithName("timeout.ms")
            @WithDefault("120000")
            long timeoutMs();
        }

        interface Refresh {
            /** How often each mirror's metadata sync cycle runs. */
            @WithName("interval.ms")
            @WithDefault("30000")
            long intervalMs();
        }
    }

    interface Failed {
        Retry retry();

        /** Exponential back-off (doubling, ±20% jitter) of FAILED partitions, then wait for an operator's recover. */
        interface Retry {
            @WithName("initial.backoff.ms")
            @WithDefault("100")
            long initialBackoffMs();

            @WithName("max.backoff.ms")
            @WithDefault("300000")
            long maxBackoffMs();

            @WithName("max.attempts")
            @WithDefault("20")
            int maxAttempts();
        }
    }

    interface State {
        Topic topic();

        /**
         * How long a state write waits for the destination to acknowledge it. Past it the write fails (503
         * COORDINATOR_NOT_AVAILABLE with Retry-After), the state is read again, and requests meanwhile are answered 503
         * at once: a caller learns of a destination outage within seconds.
         */
        @WithName("write.timeout.ms")
        @WithDefault("10000")
        int writeTimeoutMs();

        Encryption encryption();

        Group group();

        /**
         * The instances that share a destination and state topic form one consumer group on the state topic; the group
         * assigns its partitions, and with them the mirrors whose records live there.
         */
        interface Group {
            /** The group id (default {@code cluster-mirror-<state topic>}). */
            Optional<String> id();

            /**
             * How long the group waits for a silent instance before it hands its mirrors to the others: what a crashed
             * instance costs in mirroring time (the broker allows 6000 to 300000 by default).
             */
            @WithName("session.timeout.ms")
            @WithDefault("10000")
            int sessionTimeoutMs();
        }

        /** Sealing mirrors' secret config values in the state topic (AES-256-GCM). */
        interface Encryption {
            /**
             * Keys as {@code id:<base64 of 32 bytes>}; the first seals, every one opens (rotation: put the new key
             * first, keep the old one until the service has started once). Also {@code MIRROR_STATE_ENCRYPTION_KEYS}.
             */
            Optional<List<String>> keys();

            /** A file with one {@code id:<base64>} key per line, read at start after {@code keys}. */
            @WithName("key.file")
            Optional<String> keyFile();
        }

        interface Topic {
            /** The compacted topic on the destination that holds every mirror and partition state. */
            @WithDefault("__mirror_state")
            String name();

            @WithName("num.partitions")
            @WithDefault("50")
            int numPartitions();

            /** Capped to the destination's broker count (with a warning) when it has fewer brokers. */
            @WithName("replication.factor")
            @WithDefault("3")
            short replicationFactor();
        }
    }

    interface Source {
        /** How long creating or re-pointing a mirror waits for the source cluster to answer. */
        @WithName("request.timeout.ms")
        @WithDefault("10000")
        int requestTimeoutMs();

        /** Kafka config providers (KIP-297) that resolve references in mirrors' source settings: file, directory, env. */
        @WithName("config.providers")
        Optional<List<String>> configProviders();

        /** Each provider's parameters, e.g. {@code mirror.source.config.provider.file.allowed.paths}. */
        @WithName("config.provider")
        Map<String, Map<String, String>> configProviderParams();

        /**
         * Where mirrors may point: {@code host:port} patterns ({@code *} matches within a name, a missing port any port)
         * or CIDR blocks. Every address of a mirror's {@code bootstrap.servers} must match one. Unset: anywhere.
         */
        Optional<List<String>> allowlist();

        /**
         * The classes a mirror's class-valued client settings may name ({@code ssl.engine.factory.class},
         * {@code sasl.login.class}, {@code sasl.login.callback.handler.class}, ...): the Kafka client instantiates
         * them. Unset: none, and such a setting is refused.
         */
        @WithName("allowed.classes")
        Optional<Set<String>> allowedClasses();
    }

    interface Destination {
        /** Timeout of each Admin, produce and replay call against the destination cluster. */
        @WithName("request.timeout.ms")
        @WithDefault("30000")
        int requestTimeoutMs();

        /** How long start-up waits between attempts while the destination cannot be reached. */
        @WithName("retry.backoff.ms")
        @WithDefault("2000")
        int retryBackoffMs();
    }
}
