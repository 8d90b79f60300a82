# Reference numbers for tests/statcore/quantreg/test_quantreg_r_features.py, from R quantreg.
#
# Run from the repository root (R >= 4, Debian's r-cran-quantreg, 5.94 when written):
#   Rscript tests/statcore/quantreg/reference/make_r_reference.R tests/statcore/quantreg/reference
# It writes r_quantreg.txt (one "key value value ..." line per result, %.17g) and the explicit
# bootstrap draws boot_U_*.csv that make boot.rq's xy, wxy and pwy replicates reproducible in
# Python. The data are statcore's own files, so both sides fit identical numbers.
suppressMessages(library(quantreg))
args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "."
out <- file(file.path(dir, "r_quantreg.txt"), "w")
put <- function(key, v) cat(key, sprintf("%.17g", as.numeric(v)), "\n", file = out)

engel <- read.csv("statcore/datasets/_files/engel.csv")
grunfeld <- read.csv("statcore/datasets/_files/grunfeld.csv")
stack <- read.csv("statcore/datasets/_files/stackloss.csv")
n <- nrow(engel)
w_engel <- 0.5 + ((seq_len(n) - 1) %% 4) / 2               # 0.5, 1, 1.5, 2, 0.5, ...
w_stack <- 1 + ((seq_len(nrow(stack)) - 1) %% 3)            # 1, 2, 3, 1, ...

# 1. weights: coefficients and every analytic se= option, rank intervals
for (tau in c(0.25, 0.5, 0.75)) {
  f <- rq(foodexp ~ income, tau = tau, data = engel, weights = w_engel)
  key <- sprintf("engel_w.%g", tau)
  put(paste0(key, ".coef"), coef(f))
  for (se in c("iid", "nid", "ker")) put(paste0(key, ".", se), summary(f, se = se)$coefficients[, 2])
  for (a in c(0.1, 0.05)) {
    s <- summary(f, se = "rank", alpha = a)$coefficients
    put(sprintf("%s.rank%g.lower", key, a), s[, 2])
    put(sprintf("%s.rank%g.upper", key, a), s[, 3])
  }
}
f <- rq(STACKLOSS ~ AIRFLOW + WATERTEMP + ACIDCONC, tau = 0.5, data = stack, weights = w_stack)
put("stack_w.0.5.coef", coef(f))
for (se in c("iid", "nid", "ker")) put(paste0("stack_w.0.5.", se), summary(f, se = se)$coefficients[, 2])

# 2. boot.rq with explicit draws: the replicates are then deterministic
x <- cbind(1, engel$income); y <- engel$foodexp
set.seed(1)
U_xy <- matrix(sample(n, n * 3, replace = TRUE), n, 3)
U_wxy <- matrix(rexp(n * 3, 1), n, 3)
U_pwy <- matrix(runif(n * 3), n, 3)
write.csv(U_xy, file.path(dir, "boot_U_xy.csv"), row.names = FALSE)
write.csv(format(U_wxy, digits = 17), file.path(dir, "boot_U_wxy.csv"), row.names = FALSE)
write.csv(format(U_pwy, digits = 17), file.path(dir, "boot_U_pwy.csv"), row.names = FALSE)
U_wxy <- as.matrix(read.csv(file.path(dir, "boot_U_wxy.csv")))
U_pwy <- as.matrix(read.csv(file.path(dir, "boot_U_pwy.csv")))
for (m in c("xy", "wxy", "pwy")) {
  U <- get(paste0("U_", m))
  B <- boot.rq(x, y, tau = 0.5, R = 3, bsmethod = m, U = U)$B
  put(paste0("boot_fixed.", m), t(B))                        # replicate-major
}

# 3. bootstrap standard errors by Monte Carlo (4000 replicates each)
for (m in c("xy", "wxy", "pwy", "mcmb", "wild")) {
  set.seed(2)
  s <- tryCatch(summary(rq(foodexp ~ income, tau = 0.5, data = engel), se = "boot",
                        bsmethod = m, R = 4000)$coefficients[, 2],
                error = function(e) c(NA, NA))
  put(paste0("boot_se.", m), s)
}
set.seed(3)
put("boot_se_w.xy", summary(rq(foodexp ~ income, tau = 0.5, data = engel, weights = w_engel),
                            se = "boot", R = 4000)$coefficients[, 2])

# 4. akj at 0 and the leverage of the wild bootstrap
r <- rq(foodexp ~ income, tau = 0.5, data = engel)$residuals
put("akj.engel_resid", akj(r, z = 0)$dens)
put("hat.engel", hat(x, intercept = FALSE)[1:5])

# 5. anova: equality of slopes across levels (Wald, se = "nid")
fs <- rq(foodexp ~ income, tau = c(0.25, 0.5, 0.75), data = engel)
put("anova.engel.joint", unlist(anova(fs)$table))               # ndf ddf Tn pvalue
put("anova.engel.each", unlist(anova(fs, joint = FALSE)$table))
g3 <- rq(invest ~ value + capital, tau = c(0.25, 0.5, 0.75), data = grunfeld)
put("anova.grunfeld.joint", unlist(anova(g3)$table))
put("anova.grunfeld.each", unlist(anova(g3, joint = FALSE)$table))    # by column
ga <- rq(invest ~ value + capital, tau = 0.25, data = grunfeld)
gb <- rq(invest ~ value + capital, tau = 0.75, data = grunfeld)
put("anova.grunfeld.two", unlist(anova(ga, gb)$table))
full <- rq(invest ~ value + capital, tau = 0.5, data = grunfeld)
reduced <- rq(invest ~ value, tau = 0.5, data = grunfeld)
put("anova.grunfeld.nested", unlist(anova(full, reduced)$table))
fw <- rq(foodexp ~ income, tau = c(0.25, 0.75), data = engel, weights = w_engel)
put("anova.engel_w.joint", unlist(anova(fw)$table))

# 6. predict(interval = "confidence")
nd <- data.frame(income = c(500, 1000, 2000))
f <- rq(foodexp ~ income, tau = 0.5, data = engel)
put("predict.engel.nid", predict(f, nd, interval = "confidence"))       # fit, lower, higher by column
put("predict.engel.iid90", predict(f, nd, interval = "confidence", se = "iid", level = 0.9))
fw <- rq(foodexp ~ income, tau = 0.25, data = engel, weights = w_engel)
put("predict.engel_w.ker", predict(fw, nd, interval = "confidence", se = "ker"))
close(out)
