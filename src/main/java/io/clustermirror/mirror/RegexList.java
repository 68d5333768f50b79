package io.clustermirror.mirror;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * User-supplied regexes ({@code mirror.topics.include}, {@code mirror.groups.exclude}, the {@code include} of a
 * start, ACL rules' resource names, access grants): matched by RE2/J, in time linear in the name (as Kafka's own
 * server-side regexes of KIP-848), so that no pattern and name can pin a thread: {@code (.*a){20}} backtracks for
 * minutes in {@code java.util.regex} on a name of 30 {@code a}s. What RE2 cannot express (backreferences,
 * lookaround, possessive quantifiers) is refused. Bounded, because compiling costs time growing with a pattern's
 * length, and compiled once per distinct list, because the sync cycles match every topic and group against them
 * every few seconds.
 */
public final class RegexList {

    /** Longest single pattern accepted. */
    public static final int MAX_PATTERN_LENGTH = 1_000;
    /** Most patterns accepted in one list. */
    public static final int MAX_PATTERNS = 100;
    /**
     * Characters of pattern source kept compiled (a few MiB of heap); beyond it the least recently used lists are
     * dropped and compiled again on their next use.
     */
    private static final long CACHE_CHARS = 1_000_000;

    /** Guarded by itself; access order, so the eldest entry is the least recently used. */
    private static final Map<List<String>, List<Pattern>> CACHE = new LinkedHashMap<>(64, 0.75f, true);

    private static long cachedChars;
    private static final AtomicLong COMPILATIONS = new AtomicLong();

    private RegexList() {}

    /**
     * The compiled patterns, from the cache when this exact list was compiled before; validates it first (bounds
     * and syntax), throwing {@link IllegalArgumentException} with a reason that names the pattern's start.
     */
    public static List<Pattern> compile(List<String> regexes) {
        List<String> key = List.copyOf(regexes);
        synchronized (CACHE) {
            List<Pattern> cached = CACHE.get(key);
            if (cached != null) {
                return cached;
            }
        }
        checkBounds(key);
        List<Pattern> compiled = new ArrayList<>(key.size());
        for (String regex : key) {
            try {
                compiled.add(Pattern.compile(regex));
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("'" + abbreviate(regex)
                        + "' is not a valid regular expression (RE2 syntax: no backreferences nor lookaround): "
                        + e.getDescription());
            } catch (StackOverflowError e) {
                throw new IllegalArgumentException("'" + abbreviate(regex) + "' is nested too deeply to compile");
            }
        }
        COMPILATIONS.incrementAndGet();
        List<Pattern> result = List.copyOf(compiled);
        synchronized (CACHE) {
            if (CACHE.put(key, result) == null) {
                cachedChars += chars(key);
            }
            var eldest = CACHE.entrySet().iterator();
            while (cachedChars > CACHE_CHARS && eldest.hasNext()) {
                cachedChars -= chars(eldest.next().getKey());
                eldest.remove();
            }
        }
        return result;
    }

    /** Refuses a list longer than {@link #MAX_PATTERNS} or a pattern longer than {@link #MAX_PATTERN_LENGTH}; cheap, no compiling. */
    public static void checkBounds(List<String> regexes) {
        if (regexes.size() > MAX_PATTERNS) {
            throw new IllegalArgumentException(
                    regexes.size() + " patterns given; at most " + MAX_PATTERNS + " are accepted");
        }
        for (String regex : regexes) {
            if (regex.length() > MAX_PATTERN_LENGTH) {
                throw new IllegalArgumentException("a pattern of " + regex.length() + " characters ('"
                        + abbreviate(regex) + "') is longer than the " + MAX_PATTERN_LENGTH + " accepted");
            }
        }
    }

    /** How many lists were compiled since start (not served from the cache): the {@code cluster_mirror_pattern_compilations_total} metric. */
    public static long compilations() {
        return COMPILATIONS.get();
    }

    private static long chars(List<String> regexes) {
        return regexes.stream().mapToLong(String::length).sum() + regexes.size();
    }

    /** At most 40 characters of a user's value, for error messages. */
    public static String abbreviate(String value) {
        return value.length() <= 40 ? value : value.substring(0, 37) + "...";
    }
}
