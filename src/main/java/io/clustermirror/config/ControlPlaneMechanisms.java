package io.clustermirror.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.eclipse.microprofile.config.Config;

/**
 * Which of Quarkus' authentication mechanisms the running configuration gives users to, read from the configuration
 * itself (property or environment-variable names): {@code basic} (users in the properties realm), {@code jwt} (a key to
 * verify bearer tokens with), {@code mtls} (client certificates mapped to roles).
 */
public final class ControlPlaneMechanisms {

    private ControlPlaneMechanisms() {}

    public static List<String> configured(Config config) {
        Set<String> names = new TreeSet<>();
        for (String name : config.getPropertyNames()) {
            if (isDefault(config, name)) {
                continue; // e.g. the JWT keys dev mode generates: defaults, not the operator's configuration
            }
            // an environment variable QUARKUS_SECURITY_USERS_EMBEDDED_USERS_ALICE names quarkus.security.users...
            names.add(name.contains(".") ? name : name.toLowerCase(Locale.ROOT).replace('_', '.'));
        }
        List<String> mechanisms = new ArrayList<>();
        if (names.stream().anyMatch(n -> n.startsWith("quarkus.security.users.embedded.users."))) {
            mechanisms.add("basic");
        }
        if (names.contains("mp.jwt.verify.publickey")
                || names.contains("mp.jwt.verify.publickey.location")
                || names.contains("smallrye.jwt.verify.key.location")) {
            mechanisms.add("jwt");
        }
        if (names.contains("quarkus.http.auth.certificate-role-properties")
                || names.contains("quarkus.http.auth.certificate.role.properties")) {
            mechanisms.add("mtls");
        }
        return List.copyOf(mechanisms);
    }

    /** Whether the value comes from defaults (extensions', or dev mode's generated ones) rather than a configuration. */
    private static boolean isDefault(Config config, String name) {
        String source = config.getConfigValue(name).getSourceName();
        return source != null
                && (source.startsWith("DefaultValuesConfigSource")
                        || source.toLowerCase(Locale.ROOT).contains("devservices"));
    }
}
