package io.clustermirror.mirror;

import java.util.regex.Pattern;

/** Mirror names follow Kafka's topic-name rules: 1–249 of {@code [a-zA-Z0-9._-]}, never "." or "..". */
public final class MirrorName {

    public static final int MAX_LENGTH = 249;
    private static final Pattern LEGAL = Pattern.compile("[a-zA-Z0-9._-]+");

    private MirrorName() {}

    /** Returns the name if legal, else throws {@link MirrorError#INVALID_CLUSTER_MIRROR_NAME} naming the rule broken. */
    public static String validate(String name) {
        if (name == null || name.isEmpty()) {
            throw invalid("Mirror name is required and must not be empty");
        }
        if (name.length() > MAX_LENGTH) {
            throw invalid(
                    "Mirror name is " + name.length() + " characters long; at most " + MAX_LENGTH + " are allowed");
        }
        if (name.equals(".") || name.equals("..")) {
            throw invalid("Mirror name cannot be '.' or '..'");
        }
        if (!LEGAL.matcher(name).matches()) {
            throw invalid(
                    "Mirror name '" + name + "' is illegal: only ASCII letters, digits, '.', '_' and '-' are allowed");
        }
        return name;
    }

    private static MirrorException invalid(String message) {
        return new MirrorException(MirrorError.INVALID_CLUSTER_MIRROR_NAME, message, "name");
    }
}
