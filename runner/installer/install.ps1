# Installs the Etikett Runner as a Windows service. Run in an elevated PowerShell:
#
#   powershell -ExecutionPolicy Bypass -File install.ps1 [-WatchRoot D:\Labels\In, E:\Export]
#
# -WatchRoot names folders (with everything below them) that deployed flows may watch and move
# files in, besides the Runner's data folder (its state folder's "data"); the service runs as
# LocalSystem, which needs access there (on a network share: the computer's account).
param([string[]]$WatchRoot = @())
$ErrorActionPreference = "Stop"
$here = Split-Path -Parent $MyInvocation.MyCommand.Path
$prefix = "$env:ProgramFiles\Etikett Runner"
$state = "$env:ProgramData\Etikett Runner"

# The state folder holds the Runner's key. Any user may create folders in ProgramData, so one
# that exists already may be someone else's: it must belong to Administrators or SYSTEM, hold
# nothing of anyone else's and no link, or the installation stops. A new one is created with
# its access list in the same call (owner Administrators; only SYSTEM and Administrators;
# nothing inherited), never first open and restricted later.
$system = New-Object System.Security.Principal.SecurityIdentifier("S-1-5-18")
$admins = New-Object System.Security.Principal.SecurityIdentifier("S-1-5-32-544")
$acl = New-Object System.Security.AccessControl.DirectorySecurity
$acl.SetOwner($admins)
$acl.SetAccessRuleProtection($true, $false)
foreach ($sid in @($system, $admins)) {
    $acl.AddAccessRule((New-Object System.Security.AccessControl.FileSystemAccessRule(
        $sid, "FullControl", "ContainerInherit,ObjectInherit", "None", "Allow")))
}

function Get-Who($sid) {
    try { $sid.Translate([System.Security.Principal.NTAccount]).Value } catch { $sid.Value }
}

function Assert-Ours([string]$path) {
    $item = Get-Item -LiteralPath $path -Force
    if ($item.Attributes -band [System.IO.FileAttributes]::ReparsePoint) {
        throw "$path is a link or junction. Remove it and run install.ps1 again."
    }
    $owner = (Get-Acl -LiteralPath $path).GetOwner([System.Security.Principal.SecurityIdentifier])
    if (-not ($owner.Equals($system) -or $owner.Equals($admins))) {
        throw ("$path belongs to $(Get-Who $owner), not to Administrators or SYSTEM: someone " +
            "else made it and could read the Runner's key. Remove it, or take it over " +
            "deliberately (takeown /F `"$path`" /A /R), and run install.ps1 again.")
    }
}

function Assert-StateFolder([string]$path) {
    Assert-Ours $path
    Get-ChildItem -LiteralPath $path -Force -Recurse | ForEach-Object { Assert-Ours $_.FullName }
    $current = Get-Acl -LiteralPath $path
    if (-not $current.AreAccessRulesProtected) {
        throw "$path still inherits access from its parent; the installation stops."
    }
    foreach ($rule in $current.Access) {
        $sid = $rule.IdentityReference.Translate([System.Security.Principal.SecurityIdentifier])
        if (-not ($sid.Equals($system) -or $sid.Equals($admins))) {
            throw "$path grants $(Get-Who $sid) access; the installation stops."
        }
    }
}

if (Test-Path -LiteralPath $state) {
    Assert-Ours $state
    Get-ChildItem -LiteralPath $state -Force -Recurse | ForEach-Object { Assert-Ours $_.FullName }
    Set-Acl -LiteralPath $state -AclObject $acl
    if (Get-ChildItem -LiteralPath $state -Force) {
        icacls "$state\*" /reset /T /C /Q | Out-Null  # what is in it inherits the new list only
    }
} elseif ($PSVersionTable.PSEdition -eq "Core") {
    [System.IO.FileSystemAclExtensions]::Create([System.IO.DirectoryInfo]::new($state), $acl)
} else {
    [void][System.IO.Directory]::CreateDirectory($state, $acl)
}
# Whoever raced us to it: checked again now that it exists with its access list.
Assert-StateFolder $state

$roots = @()
foreach ($root in $WatchRoot) {
    $full = [System.IO.Path]::GetFullPath($root).TrimEnd("\")
    if ($full -ne $root.Replace("/", "\").TrimEnd("\")) {  # relative, C:x, \x, . or ..
        throw "-WatchRoot must be an absolute path (a drive or a share) without . or ..: $root"
    }
    $stateFolder = $state.TrimEnd("\") + "\"
    if (($full + "\").StartsWith($stateFolder, [System.StringComparison]::OrdinalIgnoreCase) -or
        $stateFolder.StartsWith($full + "\", [System.StringComparison]::OrdinalIgnoreCase)) {
        throw "-WatchRoot $root overlaps the Runner's state folder $state, which holds its key."
    }
    $roots += @("--watch-root", $full)
}

New-Item -ItemType Directory -Force -Path $prefix | Out-Null
py -3.11 -m venv "$prefix\venv"
# The engine by its file, never by name from an index: the Runner runs the service's own engine.
$engine = (Get-ChildItem -Path "$here\packages" -Filter "etikett_engine-*.whl" | Select-Object -First 1).FullName
& "$prefix\venv\Scripts\pip.exe" install --quiet $engine "$here\runner" pywin32
# celpy's parser tables, made once here: the Runner's service account may not write into the venv.
& "$prefix\venv\Scripts\python.exe" -c "from etikett_engine.cel import parser_tables; parser_tables.write()"
Copy-Item "$here\ca.pem", "$here\config.json" $prefix -Force

# The enrollment token only now, into the folder as checked: a new file (never through a link,
# never into one someone left there), inheriting the folder's access list.
$token = Join-Path $state "enrollment-token"
if (Test-Path -LiteralPath $token) { Remove-Item -LiteralPath $token -Force }
$bytes = [System.IO.File]::ReadAllBytes("$here\enrollment-token")
$stream = [System.IO.File]::Open($token, [System.IO.FileMode]::CreateNew,
    [System.IO.FileAccess]::Write, [System.IO.FileShare]::None)
try { $stream.Write($bytes, 0, $bytes.Length) } finally { $stream.Dispose() }

$service = Get-Service EtikettRunner -ErrorAction SilentlyContinue
$verb = if ($service) { "update" } else { "install" }  # again: the new -WatchRoot list applies
& "$prefix\venv\Scripts\python.exe" -m etikett_runner.windows_service --startup auto $verb `
    --config "$prefix\config.json" --state-dir "$state" --enrollment-token-file $token @roots
if ($service -and $service.Status -eq "Running") { Restart-Service EtikettRunner }
else { Start-Service EtikettRunner }
Write-Host "Etikett Runner installed as the service 'EtikettRunner'."
