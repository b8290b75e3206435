--[[
job_submit.lua - hands the jobs of gsched's partitions to gsched (docs/slurm.md).

Install: copy next to slurm.conf, set JobSubmitPlugins=lua, list gsched's partitions in
`managed` below (and say whether a job that names no partition lands in one of them), then
`scontrol reconfigure`.

  * A job submitted to a managed partition (plain sbatch / srun / salloc, or gsched itself)
    enters held: priority 0.  gsched adopts it, decides where and when it runs, sets its
    node list and releases it.  squeue shows it PENDING (JobHeldUser) until then.
  * Only root (gsched runs as root or as SlurmUser) may modify a job of a managed partition
    or move a job into one: a user cannot release, re-prioritise or re-place a held job, nor
    move a job of another partition in, and so bypass gsched.  Users keep scancel (a kill is
    not a modification).
  * Jobs of other partitions are left alone: Slurm schedules them; gsched counts their GPUs
    as taken (foreign jobs).
--]]

local managed = { gpu = true }     -- gsched's partitions
local default_is_managed = true    -- a job that names no partition goes to a managed one

local function is_managed(partition)
   if partition == nil or partition == "" then
      return default_is_managed
   end
   for p in string.gmatch(partition, "[^,]+") do
      if managed[p] then
         return true
      end
   end
   return false
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   if is_managed(job_desc.partition) then
      job_desc.priority = 0
   end
   return slurm.SUCCESS
end

-- A user may not move a job into a managed partition either (job_desc.partition, the new one,
-- is nil when unchanged): Slurm would run it there without gsched.
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   if modify_uid ~= 0 and (is_managed(job_rec.partition) or
                           (job_desc.partition ~= nil and is_managed(job_desc.partition))) then
      slurm.log_user("gsched schedules this partition: job changes are reserved to it (scancel still works)")
      return slurm.ERROR
   end
   return slurm.SUCCESS
end

slurm.log_info("gsched job_submit.lua loaded")
return slurm.SUCCESS
