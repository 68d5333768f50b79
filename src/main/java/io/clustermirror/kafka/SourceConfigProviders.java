package io.clustermirror.kafka;

import io.clustermirror.config.MirrorServiceConfig;
import io.clustermirror.mirror.MirrorConfigRules;
import io.clustermirror.mirror.MirrorError;
import io.clustermirror.mirror.MirrorException;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import org.apache.kafka.common.config.ConfigTransformer;
import org.apache.kafka.common.config.provider.ConfigProvider;
import org.apache.kafka.common.config.provider.DirectoryConfigProvider;
import org.apache.kafka.common.config.provider.EnvVarConfigProvider;
import org.apache.kafka.common.config.provider.FileConfigProvider;
import org.jboss.logging.Logger;

/**
 * Kafka's config providers (KIP-297) for a mirror's source settings, so that secrets need not be stored in
 * {@code __mirror_state}: a value such as {@code ${file:/etc/cluster-mirror/source.properties:sasl.jaas.config}}
 * or {@code ${env:SOURCE_JAAS}} is stored as written and resolved each time a source client is built. Only the
 * providers the operator enables for the service ({@code mirror.source.config.providers}, with Kafka's own
 * parameters under {@code mirror.source.config.provider.<name>.*}, e.g. {@code allowed.paths}) resolve;
 * a reference to any other is refused, so that an API caller cannot make the service read files it was not meant to.
 */
@ApplicationScoped
public class SourceConfigProviders {

    private static final Logger LOGGER = Logger.getLogger(SourceConfigProviders.class);
    private static final String PREFIX = "mirror.source.config.providers";

    private final Map<String, ConfigProvider> providers;
    private final ConfigTransformer transformer;
    private final Predicate<String> secret;

    @Inject
    SourceConfigProviders(MirrorServiceConfig config, MirrorConfigRules rules) {
        this(enabled(config.source()), rules::isSensitive);
    }

    /**
     * @param enabled the named providers with their parameters
     * @param secret the settings that may hold a reference: the secret ones, whose values Kafka clients never print
     *        (a reference in another setting would come back resolved in the client's error message)
     */
    public SourceConfigProviders(Map<String, Map<String, String>> enabled, Predicate<String> secret) {
        this.secret = secret;
        Map<String, ConfigProvider> built = new LinkedHashMap<>();
        enabled.forEach((name, params) -> {
            ConfigProvider provider = switch (name) {
                case "file" -> new FileConfigProvider();
                case "directory" -> new DirectoryConfigProvider();
                case "env" -> new EnvVarConfigProvider();
                default ->
                    throw new IllegalArgumentException(
                            PREFIX + ": unknown config provider '" + name + "' (known: file, directory, env)");
            };
            provider.configure(params);
            if (("file".equals(name) || "directory".equals(name)) && !params.containsKey("allowed.paths")
                    || "env".equals(name) && !params.containsKey("allowlist.pattern")) {
                LOGGER.warnf(
                        "Config provider '%s' for source settings has no %s: any mirror may read any %s the service can",
                        name,
                        "env".equals(name) ? "allowlist.pattern" : "allowed.paths",
                        "env".equals(name) ? "environment variable" : "file");
            }
            built.put(name, provider);
        });
        this.providers = Map.copyOf(built);
        this.transformer = new ConfigTransformer(providers);
        if (!providers.isEmpty()) {
            LOGGER.infof("Config providers for source settings: %s", providers.keySet());
        }
    }

    private static Map<String, Map<String, String>> enabled(MirrorServiceConfig.Source source) {
        Map<String, Map<String, String>> enabled = new LinkedHashMap<>();
        source.configProviders()
                .orElse(List.of())
                .forEach(name ->
                        enabled.put(name.trim(), source.configProviderParams().getOrDefault(name.trim(), Map.of())));
        return enabled;
    }

    /**
     * The source client settings with every {@code ${provider:[path:]key}} reference resolved.
     *
     * @throws MirrorException INVALID_CONFIG naming the key, when a value refers to a provider this service does not
     *         enable or the provider cannot resolve it (no such file, a path outside {@code allowed.paths}, ...)
     */
    public Map<String, String> resolve(Map<String, String> settings) {
        for (Map.Entry<String, String> entry : settings.entrySet()) {
            Matcher references = ConfigTransformer.DEFAULT_PATTERN.matcher(entry.getValue());
            while (references.find()) {
                if (!secret.test(entry.getKey())) {
                    throw new MirrorException(
                            MirrorError.INVALID_CONFIG,
                            "'" + entry.getKey() + "' cannot refer to a config provider: "
                                    + "only secret settings (passwords, sasl.jaas.config, keys) may",
                            "config." + entry.getKey());
                }
                if (!providers.containsKey(references.group(1))) {
                    throw new MirrorException(
                            MirrorError.INVALID_CONFIG,
                            "'" + entry.getKey() + "' refers to config provider '" + references.group(1)
                                    + "', which this service does not enable (" + PREFIX + ": " + providers.keySet()
                                    + ")",
                            "config." + entry.getKey());
                }
            }
        }
        if (providers.isEmpty()) {
            return settings;
        }
        Map<String, String> resolved = new LinkedHashMap<>();
        settings.forEach((key, value) -> {
            String result;
            try {
                result = transformer.transform(Map.of(key, value)).data().get(key);
            } catch (RuntimeException e) {
                throw new MirrorException(
                        MirrorError.INVALID_CONFIG,
                        "'" + key + "' could not be resolved: " + e.getMessage(),
                        "config." + key);
            }
            if (ConfigTransformer.DEFAULT_PATTERN
                    .matcher(result)
                    .find()) { // a provider leaves what it cannot find as it was
                throw new MirrorException(
                        MirrorError.INVALID_CONFIG,
                        "'" + key + "' could not be resolved: its config provider has no "
                                + "such key, file or directory, or the path is outside its allowed.paths",
                        "config." + key);
            }
            resolved.put(key, result);
        });
        return resolved;
    }
}
